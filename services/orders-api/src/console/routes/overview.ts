import { Router } from 'express';
import { auditLogOf, eventsOf, findEventOf, overviewOf, rulesQuestionOf } from '../../use-cases/console-reads';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { tokyoDay } from '../format';
import { sendScreen } from '../render';
import { ConsoleRefusal, contextOf, pathId, queryText, requireRole, signedInOf } from '../request';
import { AuditScreen } from '../screens/audit';
import { EventListScreen, EventScreen } from '../screens/events';
import { OverviewScreen } from '../screens/overview';
import { EVENT_TYPES, type EventType } from '@pmatch/contracts';

/** Figures are counted to this many at most; past it the card says "10,000 or more". */
const COUNT_CAP = 10_000;
const LIST_LIMIT = 50;

/** The read-only screens: the overview, the events and the audit log (admins). */
export function overviewRoutes(deps: OrdersApiDeps): Router {
  const router = Router();

  router.get('/dashboard/', async (req, res) => {
    const now = deps.clock.now();
    const { actor } = signedInOf(req);
    const { counts, events } = await overviewOf(deps, actor, { now, end: tokyoDay(now).end }, COUNT_CAP);
    // Only an admin may change the rules, so only an admin is asked.
    const askAboutRules = actor.role === 'admin' ? await rulesQuestionOf(deps, actor) : undefined;
    sendScreen(res, OverviewScreen, { ctx: contextOf(req), counts, events, cap: COUNT_CAP, askAboutRules });
  });

  router.get('/dashboard/events', async (req, res) => {
    const type = EVENT_TYPES.includes(req.query.type as EventType) ? (req.query.type as string) : undefined;
    const after = queryText(req, 'after');
    const slice = await eventsOf(deps, signedInOf(req).actor, {
      limit: LIST_LIMIT,
      ...(type === undefined ? {} : { type }),
      ...(after !== undefined && /^evt_[0-9A-Za-z]{12,40}$/.test(after) ? { beforeId: after } : {}),
    });
    sendScreen(res, EventListScreen, { ctx: contextOf(req), type, ...slice });
  });

  router.get('/dashboard/events/:id', async (req, res) => {
    const row = await findEventOf(deps, signedInOf(req).actor, pathId(req));
    if (row === null) throw new ConsoleRefusal(404, 'no such event');
    sendScreen(res, EventScreen, { ctx: contextOf(req), row });
  });

  router.get('/dashboard/audit', requireRole('admin'), async (req, res) => {
    const before = queryText(req, 'after');
    const slice = await auditLogOf(deps, signedInOf(req).actor.organisationId, {
      limit: LIST_LIMIT,
      ...(before !== undefined && /^\d{1,19}$/.test(before) ? { beforeId: BigInt(before) } : {}),
    });
    sendScreen(res, AuditScreen, { ctx: contextOf(req), ...slice });
  });

  return router;
}
