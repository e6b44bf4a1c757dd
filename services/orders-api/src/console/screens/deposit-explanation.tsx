import { deciderWords, reasonWords } from '../words';
import type { Decision } from '@pmatch/contracts';
import type { OrderRow, TransactionRow } from '@pmatch/db';
import type { ReversedPayment, ShownExplanation } from '../../use-cases/console-reads';
import { tokyoTime } from '../format';
import type { ConsoleRequestContext } from '../request';
import { Badge, Facts, PostForm } from '../components/layout';

// Parts of a deposit's page: how it is explained now, a reversed payment of it, and the confirm form.

/** A decision's or candidate's reason in the console's language (`reasonWords`). */
export function reasonText(ctx: ConsoleRequestContext, reason: string | null | undefined): string {
  return reasonWords(ctx.t, reason);
}

/**
 * The decision's reason, and for a held or unmatched deposit what deciding it again now gives and
 * under which rules (or that the matcher did not answer), the reason stored when it was decided
 * where that differs, and a word on orders of its amount placed after it.
 */
export function DecisionNow({
  ctx,
  explanation,
  decision,
  stored,
  orderById,
}: {
  ctx: ConsoleRequestContext;
  explanation: ShownExplanation;
  decision: Decision;
  stored: Decision;
  orderById: Map<string, OrderRow>;
}) {
  const d = ctx.t.deposits;
  return (
    <>
      <ExplanationNow ctx={ctx} explanation={explanation} orderById={orderById} />
      <p>
        {d.decisionReason}: <strong>{reasonText(ctx, decision.reason)}</strong>
      </p>
      {explanation.kind === 'current' && stored.reason !== decision.reason && stored.reason !== '' ? (
        <p class="muted" data-explanation="stored">
          {d.storedReason}: {reasonText(ctx, stored.reason)}
        </p>
      ) : null}
      {decision.candidates.some((c) => c.excluded_because === 'ordered_after_deposit') ? (
        <div class="notice notice-info" data-explanation="later-order">
          <p>
            <strong>{d.laterOrder}</strong>
          </p>
          <p>{d.laterOrderHint}</p>
        </div>
      ) : null}
    </>
  );
}

/** What deciding the deposit again now gives, and under which rules; or that only the stored explanation could be shown. */
function ExplanationNow({ ctx, explanation, orderById }: { ctx: ConsoleRequestContext; explanation: ShownExplanation; orderById: Map<string, OrderRow> }) {
  const { t } = ctx;
  const d = t.deposits;
  if (explanation.kind === 'unavailable') {
    return (
      <p class="notice notice-info" data-explanation="unavailable">
        {d.explanationUnavailable}
      </p>
    );
  }
  if (explanation.kind === 'stored') return null;
  const orderName = (id: string | null) => (id === null ? '' : (orderById.get(id)?.externalId ?? id));
  return (
    <div class="panel" data-explanation="now">
      <p>
        <strong>{d.decisionNow}</strong>:{' '}
        {explanation.outcome === 'confirmed' ? d.nowConfirmed(orderName(explanation.orderId)) : explanation.outcome === 'held' ? d.nowHeld : d.nowUnmatched}
      </p>
      <p class="muted">
        {d.rulesNow}: {explanation.rules.length === 0 ? d.noRules : explanation.rules.map((r) => t.settings.ruleNames[r] ?? r).join(', ')}
      </p>
    </div>
  );
}

/**
 * The payments of this deposit that a person reversed, newest first: the reopened order, when, by
 * whom and why; with the usual confirm for that order when it is not already among the candidates.
 */
export function ReversedPayments({
  ctx,
  deposit,
  reversals,
  confirmable,
  candidateIds,
}: {
  ctx: ConsoleRequestContext;
  deposit: TransactionRow;
  reversals: ReversedPayment[];
  confirmable: boolean;
  candidateIds: ReadonlySet<string>;
}) {
  const { t } = ctx;
  const d = t.deposits;
  const o = t.orders;
  return (
    <section aria-labelledby="reversed">
      <h2 id="reversed">{d.reversedTitle}</h2>
      {reversals.map((r) => {
        const name = r.order?.externalId ?? r.orderId;
        const open = r.order !== undefined && (r.order.status === 'open' || r.order.status === 'expired');
        return (
          <div class="panel">
            <p>{d.reversedIntro(name)}</p>
            <Facts
              rows={[
                [d.candidateOrder, <a href={`/dashboard/orders/${r.orderId}`}>{name}</a>],
                [t.common.status, r.order ? <Badge kind={r.order.status}>{o.statuses[r.order.status] ?? r.order.status}</Badge> : ''],
                [o.reversedAt, tokyoTime(r.reversedAt)],
                [o.reversedBy, r.decidedBy ? deciderWords(ctx, r.decidedBy) : ''],
                [o.reversalReason, r.reason ?? o.noReason],
              ]}
            />
            {confirmable && open && !candidateIds.has(r.orderId) ? <ConfirmForm ctx={ctx} deposit={deposit} order={r.order!} nameFits={false} /> : null}
          </div>
        );
      })}
    </section>
  );
}

/**
 * "Confirm and next" and "confirm" for one order; the matcher carries it out. Primary when the name
 * fits, else secondary; where the names differ, a checkbox remembers the depositor as a payer of
 * the order's name. `shortcut` (1–9) is the key that chooses it; `withoutChoice` lets `c` confirm
 * it with nothing chosen (the order the matcher would confirm the deposit for now).
 */
export function ConfirmForm({
  ctx,
  deposit,
  order,
  nameFits,
  exact = false,
  shortcut,
  withoutChoice = false,
}: {
  ctx: ConsoleRequestContext;
  deposit: TransactionRow;
  order: OrderRow;
  nameFits: boolean;
  exact?: boolean;
  shortcut?: number;
  withoutChoice?: boolean;
}) {
  const d = ctx.t.deposits;
  const kind = nameFits ? undefined : 'secondary';
  const key = shortcut !== undefined && shortcut <= 9 ? shortcut : undefined;
  return (
    <PostForm ctx={ctx} action={`/dashboard/deposits/${deposit.id}/match`} class="stack candidate-form">
      <input type="hidden" name="order_id" value={order.id} />
      {exact ? null : (
        <label class="checkbox">
          <input type="checkbox" name="remember_payer" /> {d.rememberPayer(order.payerName)}
        </label>
      )}
      <button
        type="submit"
        name="then"
        value="next"
        class={kind}
        data-candidate={key === undefined ? undefined : String(key)}
        data-without-choice={withoutChoice ? '' : undefined}
        aria-label={key === undefined ? d.confirmNextFor(order.externalId) : `${key} ${d.confirmNextFor(order.externalId)}`}
      >
        {key === undefined ? null : <kbd>{key}</kbd>} {d.confirmNext}
      </button>
      <button type="submit" name="then" value="stay" class="secondary" aria-label={d.confirmFor(order.externalId)}>
        {d.confirm}
      </button>
    </PostForm>
  );
}
