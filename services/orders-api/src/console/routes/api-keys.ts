import { API_KEY_PERMISSIONS, type ApiKeyPermission } from '@pmatch/contracts';
import { Router } from 'express';
import type { ConsoleAppDeps } from '../../use-cases/console-login';
import { getApiKeys, getApiKeysAndScopes, issueApiKey, revokeApiKey } from '../../use-cases/manage-api-keys';
import { takeShownOnce } from '../../use-cases/shown-once';
import { ConsoleRefusal, auditContextOf, contextOf, field, pathId, requireRole, showToOf, signedInOf } from '../request';
import { redirectDone, sendScreen } from '../render';
import { IssuedKeyScreen, KeyListScreen, RevokeKeyScreen } from '../screens/api-keys';

/** API keys of the mode: issue (the text shown once, after a redirect), revoke (asked first), and when each was last used. */
export function apiKeyRoutes(deps: ConsoleAppDeps): Router {
  const router = Router();

  router.get('/dashboard/api-keys', async (req, res) => {
    sendScreen(res, KeyListScreen, { ctx: contextOf(req), ...(await getApiKeysAndScopes(deps, signedInOf(req).actor)) });
  });

  // The key's text is stored only as a hash; the page after the redirect shows it once.
  router.post('/dashboard/api-keys', requireRole('admin'), async (req, res) => {
    const given = field(req, 'permission') ?? '';
    const permission = (API_KEY_PERMISSIONS as readonly string[]).includes(given) ? (given as ApiKeyPermission) : 'read_write';
    const account = field(req, 'bank_account_id') ?? '';
    const { displayId } = await issueApiKey(
      deps,
      signedInOf(req).actor,
      { name: field(req, 'name') ?? '', permission, bankAccountId: account === '' ? null : account },
      auditContextOf(req),
      showToOf(req),
    );
    res.redirect(303, `/dashboard/api-keys/issued/${displayId!}`);
  });

  router.get('/dashboard/api-keys/issued/:id', requireRole('admin'), async (req, res) => {
    const shown = await takeShownOnce(deps, showToOf(req), 'api_key', pathId(req));
    sendScreen(res, IssuedKeyScreen, { ctx: contextOf(req), shown }, shown === undefined ? 410 : 200);
  });

  router.get('/dashboard/api-keys/:id/revoke', requireRole('admin'), async (req, res) => {
    const key = (await getApiKeys(deps, signedInOf(req).actor)).find((k) => k.id === pathId(req) && k.revokedAt === null);
    if (key === undefined) throw new ConsoleRefusal(404, 'no such active key');
    sendScreen(res, RevokeKeyScreen, { ctx: contextOf(req), apiKey: key });
  });

  router.post('/dashboard/api-keys/:id/revoke', requireRole('admin'), async (req, res) => {
    await revokeApiKey(deps, signedInOf(req).actor, pathId(req), auditContextOf(req));
    redirectDone(res, '/dashboard/api-keys', 'revoked');
  });

  return router;
}
