import { MATCHING_RULES, type MatchingRule, type PreviewedConfirmation, type Settings } from '@pmatch/contracts';
import type { OrderRow, TransactionRow } from '@pmatch/db';
import { PasswordAgainField } from '../components/confirm';
import { Layout, Notice, PostForm, TableBox } from '../components/layout';
import { numberText, tokyoTime, yen } from '../format';
import type { ConsoleRequestContext } from '../request';
import { reasonText } from './deposit-detail';

function RuleChoices({ ctx, selected }: { ctx: ConsoleRequestContext; selected: readonly string[] }) {
  return (
    <fieldset>
      <legend>{ctx.t.settings.rules}</legend>
      {MATCHING_RULES.map((rule) => (
        <label class="checkbox">
          <input type="checkbox" name="rules" value={rule} checked={selected.includes(rule)} /> {ctx.t.settings.ruleNames[rule]}
        </label>
      ))}
    </fieldset>
  );
}

/** A labelled yes/no choice posted as `true` or `false`. */
function YesNoField({ ctx, label, name, value, disabled }: { ctx: ConsoleRequestContext; label: string; name: string; value: boolean; disabled: boolean }) {
  const { t } = ctx;
  return (
    <label>
      {label}
      <select name={name} disabled={disabled}>
        <option value="true" selected={value}>
          {t.common.yes}
        </option>
        <option value="false" selected={!value}>
          {t.common.no}
        </option>
      </select>
    </label>
  );
}

/** Auto-confirmation of late orders, the matching rules (to preview), and the organisation's second-factor rule. */
export function SettingsScreen({
  ctx,
  settings,
  requireAdminTotp,
  securityProblem,
}: {
  ctx: ConsoleRequestContext;
  settings: Settings;
  requireAdminTotp: boolean;
  /** Why the security setting was not changed (the password again was wrong or throttled). */
  securityProblem?: string;
}) {
  const { t, language } = ctx;
  const s = t.settings;
  const admin = ctx.signedIn!.actor.role === 'admin';
  const params = new URLSearchParams(ctx.query);
  const done = params.get('done');
  return (
    <Layout ctx={ctx} title={s.title} section="settings">
      {done === 'saved' ? <Notice kind="success">{s.saved}</Notice> : null}
      {done === 'applied' ? (
        <Notice kind="success">
          {s.applied(numberText(Number(params.get('confirmed') ?? 0), language))}
          {Number(params.get('left_held') ?? 0) > 0 ? ` ${s.leftHeld(numberText(Number(params.get('left_held')), language))}` : ''}
        </Notice>
      ) : null}
      <section aria-labelledby="auto-confirm">
        <h2 id="auto-confirm">{s.autoConfirm}</h2>
        <p class="muted">{s.autoConfirmHelp}</p>
        <PostForm ctx={ctx} action="/dashboard/settings/auto-confirm" class="form-grid">
          <YesNoField ctx={ctx} label={s.autoConfirm} name="auto_confirm_late_orders" value={settings.auto_confirm_late_orders} disabled={!admin} />
          {admin ? <button type="submit">{t.common.save}</button> : null}
        </PostForm>
      </section>
      <section aria-labelledby="rules">
        <h2 id="rules">{s.rules}</h2>
        <p class="muted">{s.rulesHelp}</p>
        <PostForm ctx={ctx} action="/dashboard/settings/rules/preview" class="stack">
          <RuleChoices ctx={ctx} selected={settings.matching_rules} />
          {admin ? (
            <div>
              <button type="submit">{s.preview}</button>
            </div>
          ) : null}
        </PostForm>
      </section>
      <section aria-labelledby="dedicated-accounts">
        <h2 id="dedicated-accounts">{t.dedicatedAccounts.title}</h2>
        <p>
          <a href="/dashboard/settings/dedicated-accounts">{t.dedicatedAccounts.link}</a>
        </p>
      </section>
      <section aria-labelledby="security">
        <h2 id="security">{s.security}</h2>
        {securityProblem ? <Notice kind="error">{securityProblem}</Notice> : null}
        <PostForm ctx={ctx} action="/dashboard/settings/security" class="form-grid">
          <YesNoField ctx={ctx} label={s.requireAdminTotp} name="require_admin_totp" value={requireAdminTotp} disabled={!admin} />
          {admin ? <PasswordAgainField ctx={ctx} /> : null}
          {admin ? <button type="submit">{t.common.save}</button> : null}
        </PostForm>
      </section>
    </Layout>
  );
}

/** What a change of matching rules would confirm, with the button that applies it. */
export function RulePreviewScreen({
  ctx,
  rules,
  current,
  preview,
  deposits,
  orders,
}: {
  ctx: ConsoleRequestContext;
  rules: MatchingRule[];
  current: readonly string[];
  preview: { held_examined: number; held_left_out: boolean; confirmations: PreviewedConfirmation[] };
  deposits: TransactionRow[];
  orders: OrderRow[];
}) {
  const { t, language } = ctx;
  const s = t.settings;
  const ruleList = (list: readonly string[]) => (list.length === 0 ? t.common.none : list.map((r) => s.ruleNames[r] ?? r).join(', '));
  return (
    <Layout ctx={ctx} title={s.previewTitle} section="settings">
      <p>
        {s.rules}: {ruleList(current)} → <strong>{ruleList(rules)}</strong>
      </p>
      <p class="muted">{s.examined(numberText(preview.held_examined, language))}</p>
      {preview.held_left_out ? <Notice kind="info">{s.previewLeftOut}</Notice> : null}
      {preview.confirmations.length === 0 ? (
        <Notice kind="info">{s.previewNone}</Notice>
      ) : (
        <>
          <p>{s.previewIntro}</p>
          <PreviewTable ctx={ctx} confirmations={preview.confirmations} deposits={deposits} orders={orders} />
        </>
      )}
      <PostForm ctx={ctx} action="/dashboard/settings/rules/apply" class="actions panel">
        {rules.map((rule) => (
          <input type="hidden" name="rules" value={rule} />
        ))}
        {preview.confirmations.map((c) => (
          <input type="hidden" name="confirm" value={`${c.transaction_id}:${c.order_id}`} />
        ))}
        <button type="submit">{s.apply}</button>
        <a href="/dashboard/settings">{t.common.cancel}</a>
      </PostForm>
    </Layout>
  );
}

/** The held deposits a rule change would confirm, each with the order it would be confirmed for. */
function PreviewTable({
  ctx,
  confirmations,
  deposits,
  orders,
}: {
  ctx: ConsoleRequestContext;
  confirmations: PreviewedConfirmation[];
  deposits: TransactionRow[];
  orders: OrderRow[];
}) {
  const { t } = ctx;
  const depositById = new Map(deposits.map((d) => [d.id, d]));
  const orderById = new Map(orders.map((o) => [o.id, o]));
  return (
    <TableBox label={t.common.table(t.settings.previewTitle)}>
      <table id="preview">
        <caption>{t.settings.previewTitle}</caption>
        <thead>
          <tr>
            <th scope="col">{t.deposits.counterparty}</th>
            <th scope="col" class="num">
              {t.common.amount}
            </th>
            <th scope="col">{t.deposits.occurredAt}</th>
            <th scope="col">{t.deposits.candidateOrder}</th>
            <th scope="col">{t.orders.payerName}</th>
            <th scope="col">{t.deposits.fit}</th>
          </tr>
        </thead>
        <tbody>
          {confirmations.map((c) => {
            const deposit = depositById.get(c.transaction_id);
            const order = orderById.get(c.order_id);
            return (
              <tr data-transaction={c.transaction_id} data-order={c.order_id}>
                <td>
                  <a href={`/dashboard/deposits/${c.transaction_id}`}>{deposit?.counterparty ?? c.transaction_id}</a>
                </td>
                <td class="num">{deposit ? yen(deposit.amount) : ''}</td>
                <td>{deposit ? tokyoTime(deposit.occurredAt) : ''}</td>
                <td>
                  <a href={`/dashboard/orders/${c.order_id}`}>{order?.externalId ?? c.order_id}</a>
                </td>
                <td>{order?.payerName ?? ''}</td>
                <td>{reasonText(ctx, c.reason)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableBox>
  );
}
