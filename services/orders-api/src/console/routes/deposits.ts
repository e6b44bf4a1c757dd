import { Router } from 'express';
import { clearHeldDeposits, depositCountsOf, depositWithCandidates, nextHeldDeposit, searchDepositsOf } from '../../use-cases/console-reads';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { excludeTransaction, matchEach, matchTransaction, restoreTransaction } from '../../use-cases/match-transaction';
import { findVisibleTransaction } from '../../use-cases/read-transactions';
import { tokyoDateInput } from '../format';
import { redirectDone, sendScreen } from '../render';
import { amountIn, auditContextOf, contextOf, cursorIn, field, fieldList, nextDay, pathId, queryText, requireRole, signedInOf } from '../request';
import { DepositScreen } from '../screens/deposit-detail';
import { BulkConfirmScreen, DEPOSIT_TABS, DepositListScreen } from '../screens/deposits';

const LIST_LIMIT = 50;
/** Each tab's count stops here (shown as 1000+). */
const COUNT_CAP = 1000;
/** The most held deposits one bulk confirmation looks at and confirms. */
const BULK_LIMIT = 50;

/** Deposits by status and search; a deposit's decision explained; operators match, exclude and restore. */
export function depositRoutes(deps: OrdersApiDeps): Router {
  const router = Router();

  router.get('/dashboard/deposits', async (req, res) => {
    const status = (DEPOSIT_TABS as readonly string[]).includes(req.query.status as string) ? (req.query.status as string) : 'held';
    const name = queryText(req, 'name');
    const amount = amountIn(queryText(req, 'amount'));
    const from = tokyoDateInput(queryText(req, 'from'));
    const to = nextDay(tokyoDateInput(queryText(req, 'to')));
    const before = cursorIn(queryText(req, 'after'));
    const slice = await searchDepositsOf(deps, signedInOf(req).actor, {
      status,
      limit: LIST_LIMIT,
      ...(name === undefined ? {} : { name }),
      ...(amount === undefined ? {} : { amount }),
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
      ...(before === undefined ? {} : { before }),
    });
    const counts = await depositCountsOf(deps, signedInOf(req).actor, DEPOSIT_TABS, COUNT_CAP);
    sendScreen(res, DepositListScreen, {
      ctx: contextOf(req),
      status,
      rows: slice.rows,
      next: slice.nextBefore,
      req: req.query as Record<string, string>,
      counts,
      countCap: COUNT_CAP,
      now: deps.clock.now(),
    });
  });

  // Bulk confirmation: a summary of what would be confirmed first; only its POST acts.
  router.get('/dashboard/deposits/bulk-confirm', requireRole('operator'), async (req, res) => {
    sendScreen(res, BulkConfirmScreen, { ctx: contextOf(req), pairs: await clearHeldDeposits(deps, signedInOf(req).actor, BULK_LIMIT) });
  });

  router.post('/dashboard/deposits/bulk-confirm', requireRole('operator'), async (req, res) => {
    const { actor } = signedInOf(req);
    const pairs = [];
    for (const pair of fieldList(req, 'pair').slice(0, BULK_LIMIT)) {
      const [transactionId = '', orderId = ''] = pair.split(':');
      pairs.push({ deposit: await findVisibleTransaction(deps, actor, transactionId), orderId });
    }
    const { confirmed, left } = await matchEach(deps, actor, pairs, auditContextOf(req));
    redirectDone(res, '/dashboard/deposits', 'bulk', { confirmed: String(confirmed), left: String(left) });
  });

  router.get('/dashboard/deposits/:id', async (req, res) => {
    const search = queryText(req, 'order_search');
    const shown = await depositWithCandidates(deps, signedInOf(req).actor, pathId(req), {
      searching: req.query.find === '1' || search !== undefined,
      text: search,
    });
    sendScreen(res, DepositScreen, { ctx: contextOf(req), ...shown, search, now: deps.clock.now() });
  });

  router.post('/dashboard/deposits/:id/match', requireRole('operator'), async (req, res) => {
    const { actor } = signedInOf(req);
    const deposit = await findVisibleTransaction(deps, actor, pathId(req));
    await matchTransaction(
      deps,
      actor,
      deposit,
      { order_id: field(req, 'order_id') ?? '', remember_payer: field(req, 'remember_payer') === 'on' },
      auditContextOf(req),
    );
    if (field(req, 'then') !== 'next') return redirectDone(res, `/dashboard/deposits/${deposit.id}`, 'confirmed');
    // "Confirm and next": the next held deposit, oldest first, says the last one was confirmed.
    const next = await nextHeldDeposit(deps, actor, deposit);
    redirectDone(res, next === undefined ? '/dashboard/deposits' : `/dashboard/deposits/${next}`, 'confirmed', { previous: deposit.id });
  });

  router.post('/dashboard/deposits/:id/exclude', requireRole('operator'), async (req, res) => {
    const { actor } = signedInOf(req);
    const deposit = await findVisibleTransaction(deps, actor, pathId(req));
    await excludeTransaction(deps, actor, deposit, auditContextOf(req));
    redirectDone(res, `/dashboard/deposits/${deposit.id}`, 'excluded');
  });

  router.post('/dashboard/deposits/:id/restore', requireRole('operator'), async (req, res) => {
    const { actor } = signedInOf(req);
    const deposit = await findVisibleTransaction(deps, actor, pathId(req));
    await restoreTransaction(deps, actor, deposit, auditContextOf(req));
    redirectDone(res, `/dashboard/deposits/${deposit.id}`, 'restored');
  });

  return router;
}
