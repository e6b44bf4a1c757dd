import { MATCHING_RULES, OrderId, RULE_PREVIEW_MAX, TransactionId, type MatchingRule, type PreviewedConfirmation, type Settings } from '@pmatch/contracts';
import type { OrderRow, TransactionRow } from '@pmatch/db';
import { Router, type Request } from 'express';
import { findOrdersByIds, findTransactionsByIds } from '../../data/console-search';
import { findOrganisation, setRequireAdminTotp } from '../../data/users';
import { recordAudit } from '../../use-cases/audit';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { changeSettings, getSettings } from '../../use-cases/manage-settings';
import { applyRules, previewRules } from '../../use-cases/preview-rules';
import { numberText, tokyoTime, yen } from '../format';
import { auditContextOf, contextOf, field, fieldList, requireRole, signedInOf, type ConsoleRequestContext } from '../http';
import { redirectDone, sendPage } from '../render';
import { Layout, Notice, PostForm } from '../views/layout';
import { reasonText } from './deposit-detail';

const rulesOf = (req: Request): MatchingRule[] => MATCHING_RULES.filter((rule) => fieldList(req, 'rules').includes(rule));

/** Auto-confirmation of late orders, the matching rules with their preview, and the organisation's second-factor rule. */
export function settingsPages(deps: OrdersApiDeps): Router {
  const router = Router();

  router.get('/dashboard/settings', async (req, res) => {
    const { actor } = signedInOf(req);
    const [settings, organisation] = await Promise.all([getSettings(deps, actor), findOrganisation(deps.database.prisma, actor.organisationId)]);
    sendPage(res, <SettingsPage ctx={contextOf(req)} settings={settings} requireAdminTotp={organisation.requireAdminTotp} />);
  });

  router.post('/dashboard/settings/auto-confirm', requireRole('admin'), async (req, res) => {
    const on = field(req, 'auto_confirm_late_orders') === 'true';
    await changeSettings(deps, signedInOf(req).actor, { auto_confirm_late_orders: on });
    await recordAudit(deps, auditContextOf(req), 'settings.auto_confirm_late_orders', null, { value: on });
    redirectDone(res, '/dashboard/settings', 'saved');
  });

  router.post('/dashboard/settings/security', requireRole('admin'), async (req, res) => {
    const required = field(req, 'require_admin_totp') === 'true';
    const { actor } = signedInOf(req);
    await setRequireAdminTotp(deps.database.prisma, actor.organisationId, required);
    await recordAudit(deps, { ...auditContextOf(req), mode: null }, 'organisation.require_admin_totp', actor.organisationId, { value: required });
    redirectDone(res, '/dashboard/settings', 'saved');
  });

  router.post('/dashboard/settings/rules/preview', requireRole('admin'), async (req, res) => {
    const { actor } = signedInOf(req);
    const rules = rulesOf(req);
    const [preview, current] = await Promise.all([previewRules(deps, actor, rules), getSettings(deps, actor)]);
    const ids = preview.confirmations;
    const [deposits, orders] = await Promise.all([
      findTransactionsByIds(
        deps.database.prisma,
        actor,
        ids.map((c) => c.transaction_id),
      ),
      findOrdersByIds(
        deps.database.prisma,
        actor,
        ids.map((c) => c.order_id),
      ),
    ]);
    sendPage(res, <PreviewPage ctx={contextOf(req)} rules={rules} current={current.matching_rules} preview={preview} deposits={deposits} orders={orders} />);
  });

  router.post('/dashboard/settings/rules/apply', requireRole('admin'), async (req, res) => {
    const { actor } = signedInOf(req);
    const rules = rulesOf(req);
    const pairs = fieldList(req, 'confirm')
      .slice(0, RULE_PREVIEW_MAX)
      .flatMap((pair) => {
        const [transactionId = '', orderId = ''] = pair.split(':');
        return TransactionId.safeParse(transactionId).success && OrderId.safeParse(orderId).success
          ? [{ transaction_id: transactionId, order_id: orderId }]
          : [];
      });
    const result = await applyRules(deps, actor, rules, pairs);
    await recordAudit(deps, auditContextOf(req), 'settings.matching_rules', null, {
      value: rules,
      confirmed: result.confirmed.map((c) => c.transaction_id),
      left_held: result.left_held.map((c) => c.transaction_id),
    });
    redirectDone(res, '/dashboard/settings', 'applied', { confirmed: String(result.confirmed.length), left_held: String(result.left_held.length) });
  });

  return router;
}

function RuleChoices({ ctx, selected }: { ctx: ConsoleRequestContext; selected: readonly string[] }) {
  return (
    <fieldset>
      <legend>{ctx.t.settings.rules}</legend>
      {MATCHING_RULES.map((rule) => (
        <label class="checkbox">
          <input type="checkbox" name="rules" value={rule} checked={selected.includes(rule)} /> {ctx.t.settings.ruleNames[rule]}{' '}
          <code class="muted">{rule}</code>
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

function SettingsPage({ ctx, settings, requireAdminTotp }: { ctx: ConsoleRequestContext; settings: Settings; requireAdminTotp: boolean }) {
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
      <section aria-labelledby="security">
        <h2 id="security">{s.security}</h2>
        <PostForm ctx={ctx} action="/dashboard/settings/security" class="form-grid">
          <YesNoField ctx={ctx} label={s.requireAdminTotp} name="require_admin_totp" value={requireAdminTotp} disabled={!admin} />
          {admin ? <button type="submit">{t.common.save}</button> : null}
        </PostForm>
      </section>
    </Layout>
  );
}

function PreviewPage({
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
    <div class="table-wrap">
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
    </div>
  );
}
