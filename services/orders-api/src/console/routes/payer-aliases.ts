import { Router } from 'express';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { forgetPayerAlias, getPayerAliasList } from '../../use-cases/payer-aliases';
import { ConsoleRefusal, auditContextOf, contextOf, pathId, requireRole, signedInOf } from '../request';
import { redirectDone, sendScreen } from '../render';
import { ForgetPayerAliasScreen, PayerAliasListScreen } from '../screens/payer-aliases';

const LIST_LIMIT = 100;

/** The payers people taught (rule `learned_payer`): listed for everyone, forgotten by operators (asked first). */
export function payerAliasRoutes(deps: OrdersApiDeps): Router {
  const router = Router();

  router.get('/dashboard/payer-aliases', async (req, res) => {
    const list = await getPayerAliasList(deps, signedInOf(req).actor, { limit: LIST_LIMIT });
    sendScreen(res, PayerAliasListScreen, { ctx: contextOf(req), aliases: list.data });
  });

  router.get('/dashboard/payer-aliases/:id/forget', requireRole('operator'), async (req, res) => {
    const list = await getPayerAliasList(deps, signedInOf(req).actor, { limit: LIST_LIMIT });
    const alias = list.data.find((a) => a.id === pathId(req));
    if (alias === undefined) throw new ConsoleRefusal(404, 'not_found');
    sendScreen(res, ForgetPayerAliasScreen, { ctx: contextOf(req), alias });
  });

  router.post('/dashboard/payer-aliases/:id/forget', requireRole('operator'), async (req, res) => {
    await forgetPayerAlias(deps, signedInOf(req).actor, pathId(req), auditContextOf(req));
    redirectDone(res, '/dashboard/payer-aliases', 'forgotten');
  });

  return router;
}
