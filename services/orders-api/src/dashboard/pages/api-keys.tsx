import { API_KEY_PERMISSIONS, type ApiKeyPermission } from '@pmatch/contracts';
import type { ApiKeyRow } from '@pmatch/db';
import { Router } from 'express';
import { recordAudit } from '../../use-cases/audit';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { KEY_NAME_MAX, getApiKeys, issueApiKey, revokeApiKey } from '../../use-cases/manage-api-keys';
import { tokyoTime } from '../format';
import { auditContextOf, contextOf, field, pathId, requireRole, signedInOf, type ConsoleRequestContext } from '../http';
import { redirectDone, sendPage } from '../render';
import { ActionButton, Badge, Layout, Notice, PostForm, Table, CopyableSecret } from '../views/layout';

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
    const permission = (API_KEY_PERMISSIONS as readonly string[]).includes(field(req, 'permission') ?? '')
      ? (field(req, 'permission') as ApiKeyPermission)
      : 'read_write';
    const account = field(req, 'bank_account_id') ?? '';
    const { row, keyText } = await issueApiKey(deps, actor, { name: field(req, 'name') ?? '', permission, bankAccountId: account === '' ? null : account });
    await recordAudit(deps, auditContextOf(req), 'api_key.issue', row.id, { name: row.name, permission: row.permission, bank_account_id: row.bankAccountId });
    const { t } = ctx;
    sendPage(
      res,
      <Layout ctx={ctx} title={t.apiKeys.issuedTitle} section="apiKeys">
        <Notice kind="info">{t.apiKeys.shownOnce}</Notice>
        <CopyableSecret ctx={ctx} id="key-text">
          {keyText}
        </CopyableSecret>
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
      <Table
        ctx={ctx}
        caption={k.title}
        rows={keys}
        columns={[
          { header: k.name, cell: (key) => key.name },
          { header: k.hint, cell: (key) => <code>{key.keyHint}</code> },
          { header: k.permission, cell: (key) => k.permissions[key.permission] ?? key.permission },
          { header: k.scope, cell: (key) => key.bankAccountId ?? k.allAccounts },
          { header: t.common.created, cell: (key) => tokyoTime(key.createdAt) },
          { header: k.lastUsed, cell: (key) => (key.lastUsedAt ? tokyoTime(key.lastUsedAt) : k.never) },
          {
            header: t.common.status,
            cell: (key) =>
              key.revokedAt ? <Badge kind="revoked">{`${k.revoked} ${tokyoTime(key.revokedAt)}`}</Badge> : <Badge kind="on">{t.webhooks.enabled}</Badge>,
          },
          admin && {
            header: t.common.actions,
            cell: (key) =>
              key.revokedAt ? null : (
                <ActionButton ctx={ctx} action={`/dashboard/api-keys/${key.id}/revoke`} kind="danger" label={k.revoke} ariaLabel={`${k.revoke}: ${key.name}`} />
              ),
          },
        ]}
      />
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
