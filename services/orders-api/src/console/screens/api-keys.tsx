import { API_KEY_PERMISSIONS } from '@pmatch/contracts';
import type { ApiKeyRow, BankAccountRow } from '@pmatch/db';
import { KEY_NAME_MAX } from '../../use-cases/manage-api-keys';
import { ConfirmScreen } from '../components/confirm';
import { Badge, CopyableSecret, Layout, Notice, PostForm, Table } from '../components/layout';
import { bankAccountLine } from '../components/transfer-to';
import { tokyoTime } from '../format';
import type { ConsoleRequestContext } from '../request';

/** A key just issued: its text, shown this once; `shown` undefined when it was shown already (a reload). */
export function IssuedKeyScreen({ ctx, shown }: { ctx: ConsoleRequestContext; shown: { keyText: string; name: string } | undefined }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t.apiKeys.issuedTitle} section="apiKeys">
      {shown === undefined ? (
        <Notice kind="info">{t.apiKeys.gone}</Notice>
      ) : (
        <>
          <Notice kind="info">{t.apiKeys.shownOnce}</Notice>
          <p>{t.apiKeys.issuedName(shown.name)}</p>
          <CopyableSecret ctx={ctx} id="key-text">
            {shown.keyText}
          </CopyableSecret>
        </>
      )}
      <p>
        <a href="/dashboard/api-keys">{t.common.back}</a>
      </p>
    </Layout>
  );
}

/**
 * API keys of the mode: issue, revoke, and when each was last used. A key's scope is named as its
 * account (`scopeAccounts`: those a key may be scoped to), by id only for an account not among them.
 */
export function KeyListScreen({ ctx, keys, scopeAccounts }: { ctx: ConsoleRequestContext; keys: ApiKeyRow[]; scopeAccounts: BankAccountRow[] }) {
  const { t } = ctx;
  const k = t.apiKeys;
  const lines = new Map(scopeAccounts.map((account) => [account.id, bankAccountLine(t, account)]));
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
          { header: k.scope, cell: (key) => (key.bankAccountId === null ? k.allAccounts : (lines.get(key.bankAccountId) ?? key.bankAccountId)) },
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
                <a href={`/dashboard/api-keys/${key.id}/revoke`} class="button danger" aria-label={`${k.revoke}: ${key.name}`}>
                  {k.revoke}
                </a>
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
            {ctx.signedIn!.mode === 'live' && scopeAccounts.length > 1 ? (
              <label>
                {k.scope}
                <select name="bank_account_id">
                  <option value="">{k.allAccounts}</option>
                  {scopeAccounts.map((account) => (
                    <option value={account.id}>{lines.get(account.id)}</option>
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

/** Asks before a key is revoked: which key, and that requests with it are refused at once. (Not `key`: Preact keeps that prop for itself.) */
export function RevokeKeyScreen({ ctx, apiKey: key }: { ctx: ConsoleRequestContext; apiKey: ApiKeyRow }) {
  const { t } = ctx;
  const k = t.apiKeys;
  return (
    <ConfirmScreen
      ctx={ctx}
      section="apiKeys"
      question={k.revokeQuestion(key.name)}
      consequences={[`${k.hint}: ${key.keyHint}`, k.revokeConsequences, t.security.cannotUndo]}
      action={`/dashboard/api-keys/${key.id}/revoke`}
      button={k.revoke}
      cancelHref="/dashboard/api-keys"
    />
  );
}
