import { API_KEY_PERMISSIONS, type ApiKeyPermission } from '@pmatch/contracts';
import type { ApiKeyRow } from '@pmatch/db';
import { Router } from 'express';
import { recordAudit } from '../../use-cases/audit';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { KEY_NAME_MAX, getApiKeys, issueApiKey, revokeApiKey } from '../../use-cases/manage-api-keys';
import { tokyoTime } from '../format';
import { auditContextOf, contextOf, field, pathId, requireRole, signedInOf, type ConsoleRequestContext } from '../http';
import { redirectDone, sendPage } from '../render';
import { Badge, Layout, Notice, PostForm } from '../views/layout';

/** API keys of the mode: issue (the text shown once), revoke, and when each was last used. */
export function apiKeyPages(deps: OrdersApiDeps): Router {
  const router = Router();

  router.get('/dashboard/api-keys', async (req, res) => {
    const { actor } = signedInOf(req);
    sendPage(res, <KeyList ctx={contextOf(req)} keys={await getApiKeys(deps, actor)} accounts={actor.accountIds} />);
  });

  router.post('/dashboard/api-keys', requireRole('admin'), async (req, res) => {
    const ctx = contextOf(req);
    const { actor } = signedInOf(req);
    const permission = (API_KEY_PERMISSIONS as readonly string[]).includes(field(req, 'permission') ?? '') ? (field(req, 'permission') as ApiKeyPermission) : 'read_write';
    const account = field(req, 'bank_account_id') ?? '';
    const { row, keyText } = await issueApiKey(deps, actor, { name: field(req, 'name') ?? '', permission, bankAccountId: account === '' ? null : account });
    await recordAudit(deps, auditContextOf(req), 'api_key.issue', row.id, { name: row.name, permission: row.permission, bank_account_id: row.bankAccountId });
    const { t } = ctx;
    sendPage(
      res,
      <Layout ctx={ctx} title={t.apiKeys.issuedTitle} section="apiKeys">
        <Notice kind="info">{t.apiKeys.shownOnce}</Notice>
        <p>
          <code class="secret" id="key-text">
            {keyText}
          </code>{' '}
          <button type="button" class="secondary" data-copy="key-text" data-copied={t.common.copied} hidden>
            {t.common.copy}
          </button>
        </p>
        <p>
          <a href="/dashboard/api-keys">{t.common.back}</a>
        </p>
      </Layout>,
      201,
    );
  });

  router.post('/dashboard/api-keys/:id/revoke', requireRole('admin'), async (req, res) => {
    const keyId = pathId(req);
    await revokeApiKey(deps, signedInOf(req).actor, keyId);
    await recordAudit(deps, auditContextOf(req), 'api_key.revoke', keyId, {});
    redirectDone(res, '/dashboard/api-keys', 'revoked');
  });

  return router;
}

function KeyList({ ctx, keys, accounts }: { ctx: ConsoleRequestContext; keys: ApiKeyRow[]; accounts: readonly string[] }) {
  const { t } = ctx;
  const k = t.apiKeys;
  const admin = ctx.signedIn!.actor.role === 'admin';
  return (
    <Layout ctx={ctx} title={k.title} section="apiKeys">
      {new URLSearchParams(ctx.query).get('done') === 'revoked' ? <Notice kind="success">{k.revokedDone}</Notice> : null}
      {keys.length === 0 ? (
        <p>{t.common.none}</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption>{k.title}</caption>
            <thead>
              <tr>
                <th scope="col">{k.name}</th>
                <th scope="col">{k.hint}</th>
                <th scope="col">{k.permission}</th>
                <th scope="col">{k.scope}</th>
                <th scope="col">{t.common.created}</th>
                <th scope="col">{k.lastUsed}</th>
                <th scope="col">{t.common.status}</th>
                {admin ? <th scope="col">{t.common.actions}</th> : null}
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr>
                  <td>{key.name}</td>
                  <td>
                    <code>{key.keyHint}</code>
                  </td>
                  <td>{k.permissions[key.permission] ?? key.permission}</td>
                  <td>{key.bankAccountId ?? k.allAccounts}</td>
                  <td>{tokyoTime(key.createdAt)}</td>
                  <td>{key.lastUsedAt ? tokyoTime(key.lastUsedAt) : k.never}</td>
                  <td>{key.revokedAt ? <Badge kind="revoked">{`${k.revoked} ${tokyoTime(key.revokedAt)}`}</Badge> : <Badge kind="on">{t.webhooks.enabled}</Badge>}</td>
                  {admin ? (
                    <td>
                      {key.revokedAt ? null : (
                        <PostForm ctx={ctx} action={`/dashboard/api-keys/${key.id}/revoke`}>
                          <button type="submit" class="danger" aria-label={`${k.revoke}: ${key.name}`}>
                            {k.revoke}
                          </button>
                        </PostForm>
                      )}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {admin ? (
        <section aria-labelledby="issue">
          <h2 id="issue">{k.issue}</h2>
          <PostForm ctx={ctx} action="/dashboard/api-keys" class="stack">
            <label>
              {k.name}
              <input name="name" required maxLength={KEY_NAME_MAX} />
            </label>
            <label>
              {k.permission}
              <select name="permission">
                {API_KEY_PERMISSIONS.map((p) => (
                  <option value={p}>{k.permissions[p]}</option>
                ))}
              </select>
            </label>
            {ctx.signedIn!.mode === 'live' && accounts.length > 1 ? (
              <label>
                {k.scope}
                <select name="bank_account_id">
                  <option value="">{k.allAccounts}</option>
                  {accounts.map((a) => (
                    <option value={a}>{a}</option>
                  ))}
                </select>
              </label>
            ) : null}
            <div>
              <button type="submit">{k.issue}</button>
            </div>
          </PostForm>
        </section>
      ) : null}
    </Layout>
  );
}
