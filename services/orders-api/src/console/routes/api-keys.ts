import { API_KEY_PERMISSIONS, type ApiKeyPermission } from '@pmatch/contracts';
import { Router } from 'express';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { getApiKeys, issueApiKey, revokeApiKey } from '../../use-cases/manage-api-keys';
import { redirectDone, sendScreen } from '../render';
import { auditContextOf, contextOf, field, pathId, requireRole, signedInOf } from '../request';
import { IssuedKeyScreen, KeyListScreen } from '../screens/api-keys';

/** API keys of the mode: issue (the text shown once), revoke, and when each was last used. */
export function apiKeyRoutes(deps: OrdersApiDeps): Router {
  const router = Router();

  router.get('/dashboard/api-keys', async (req, res) => {
    const { actor } = signedInOf(req);
    sendScreen(res, KeyListScreen, { ctx: contextOf(req), keys: await getApiKeys(deps, actor), accounts: actor.accountIds });
  });

  // The key's text exists only in this answer: it is stored as a hash.
  router.post('/dashboard/api-keys', requireRole('admin'), async (req, res) => {
    const given = field(req, 'permission') ?? '';
    const permission = (API_KEY_PERMISSIONS as readonly string[]).includes(given) ? (given as ApiKeyPermission) : 'read_write';
    const account = field(req, 'bank_account_id') ?? '';
    const { keyText } = await issueApiKey(
      deps,
      signedInOf(req).actor,
      { name: field(req, 'name') ?? '', permission, bankAccountId: account === '' ? null : account },
      auditContextOf(req),
    );
    sendScreen(res, IssuedKeyScreen, { ctx: contextOf(req), keyText }, 201);
  });

  router.post('/dashboard/api-keys/:id/revoke', requireRole('admin'), async (req, res) => {
    await revokeApiKey(deps, signedInOf(req).actor, pathId(req), auditContextOf(req));
    redirectDone(res, '/dashboard/api-keys', 'revoked');
  });

  return router;
}
