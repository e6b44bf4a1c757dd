import type { Decision } from '@pmatch/contracts';
import type { OrderRow, TransactionRow } from '@pmatch/db';
import { tokyoTime, yen } from '../format';
import type { ConsoleRequestContext } from '../request';
import { Badge, Facts } from './layout';

/** The deposit a possible duplicate repeats (same account, amount, name and day, another bank reference), side by side with it. */
export function DuplicateOf({ ctx, earlier, deposit }: { ctx: ConsoleRequestContext; earlier: TransactionRow; deposit: TransactionRow }) {
  const { t } = ctx;
  const d = t.deposits;
  return (
    <section aria-labelledby="duplicate-of">
      <h3 id="duplicate-of">{d.duplicateOf}</h3>
      <Facts
        rows={[
          [
            t.common.status,
            <>
              <Badge kind={earlier.status}>{d.statuses[earlier.status] ?? earlier.status}</Badge>{' '}
              <a href={`/dashboard/deposits/${earlier.id}`}>{t.audit.openDeposit}</a>
            </>,
          ],
          [t.common.amount, yen(earlier.amount)],
          [d.counterparty, earlier.counterparty],
          [d.occurredAt, tokyoTime(earlier.occurredAt)],
          [d.bankReference, d.bankReferences(earlier.bankReference, deposit.bankReference)],
          ...(earlier.orderId
            ? [[d.linkedOrder, <a href={`/dashboard/orders/${earlier.orderId}`}>{t.audit.openOrder}</a>] as [string, preact.ComponentChildren]]
            : []),
        ]}
      />
    </section>
  );
}

/** The order a deposit into a dedicated account was held for (its last order, or its buyer's latest), with its status. */
export function DedicatedAccountOrder({ ctx, decision, orderById }: { ctx: ConsoleRequestContext; decision: Decision; orderById: Map<string, OrderRow> }) {
  const { t } = ctx;
  const account = decision.dedicated_account;
  if (!account?.order_id) return null;
  return (
    <p>
      {t.deposits.dedicatedAccountOrder}:{' '}
      <a href={`/dashboard/orders/${account.order_id}`}>{orderById.get(account.order_id)?.externalId ?? t.audit.openOrder}</a>{' '}
      {account.order_status ? <Badge kind={account.order_status}>{t.orders.statuses[account.order_status] ?? account.order_status}</Badge> : null}
    </p>
  );
}

/** The deposit's own facts, and the order it paid. */
export function DepositFacts({ ctx, deposit, orderById }: { ctx: ConsoleRequestContext; deposit: TransactionRow; orderById: ReadonlyMap<string, OrderRow> }) {
  const { t } = ctx;
  const d = t.deposits;
  return (
    <section aria-labelledby="facts">
      <h2 id="facts">{d.facts}</h2>
      <Facts
        rows={[
          [t.common.status, <Badge kind={deposit.status}>{d.statuses[deposit.status] ?? deposit.status}</Badge>],
          [t.common.amount, yen(deposit.amount)],
          [d.counterparty, deposit.counterparty],
          [d.occurredAt, tokyoTime(deposit.occurredAt)],
          ...(deposit.orderId
            ? [
                [d.linkedOrder, <a href={`/dashboard/orders/${deposit.orderId}`}>{orderById.get(deposit.orderId)?.externalId ?? t.audit.openOrder}</a>] as [
                  string,
                  preact.ComponentChildren,
                ],
              ]
            : []),
        ]}
      />
    </section>
  );
}
