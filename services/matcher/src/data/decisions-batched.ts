import {
  columns,
  modeOf,
  outboxInsert,
  outboxValues,
  sql,
  preparedQuery,
  transactionFields,
  type Columns,
  type OutboxHandOver,
  type OutboxValues,
  type Sql,
  type PreparedQuery,
  type TransactionRow,
} from '@pmatch/db';
import { BatchWriter, inboxClaimSql } from '@pmatch/platform';
import { StaleDecisionError } from './conditional-writes';
import { decisionRows, type DecidedDeposit, type DecisionRows } from './decision-rows';

/** One element per decision, in the order given; `item` numbers them from 1. */
interface DecisionColumns {
  depositId: string;
  depositVersion: string;
  depositStatus: string;
  outcome: string;
  orderId: string | null;
  orderVersion: string | null;
  orderStatus: string | null;
  payment: string | null;
  candidateOrderIds: string;
  decision: string;
  decidedAt: Date;
  consumer: string;
  messageId: string;
  startedAt: Date;
  organisationId: string;
  mode: string;
  bankAccountId: string;
}

/** One element per event, flattened, each with the `item` of its decision. */
interface EventColumns {
  eventItem: number;
  eventId: string;
  eventType: string;
  eventData: string;
}

type WriteDecisionsBatchedValues = Columns<DecisionColumns> & Columns<EventColumns> & OutboxValues;

/**
 * Each decision's writes (order paid, deposit decided, inbox row, events, leased announcements) are
 * conditional on its rows' versions and statuses as read; one whose rows changed writes nothing.
 * `decision_written_whole` fails the statement if an order was paid but its deposit not decided.
 * See docs/decisions/0008-decision-written-as-one-conditional-statement.md; the statuses are
 * parameters, not constants, for docs/decisions/0016-queue-statements-find-rows-by-key.md.
 */
export const writeDecisionsBatchedQuery: PreparedQuery<WriteDecisionsBatchedValues, TransactionRow & { item: number | null }> = preparedQuery(
  'matcher.write_decisions',
  (p) => sql`WITH items AS (
     SELECT * FROM unnest(${p.depositId}::text[], ${p.depositVersion}::text[], ${p.depositStatus}::text[], ${p.outcome}::text[],
                          ${p.orderId}::text[], ${p.orderVersion}::text[], ${p.orderStatus}::text[], ${p.payment}::jsonb[],
                          ${p.candidateOrderIds}::jsonb[], ${p.decision}::jsonb[], ${p.decidedAt}::timestamptz[], ${p.consumer}::text[],
                          ${p.messageId}::text[], ${p.startedAt}::timestamptz[], ${p.organisationId}::text[], ${p.mode}::text[], ${p.bankAccountId}::text[])
       WITH ORDINALITY AS i(deposit_id, deposit_version, deposit_status, outcome, order_id, order_version, order_status, payment,
                            candidate_order_ids, decision, decided_at, consumer, message_id, started_at, organisation_id, mode, bank_account_id, item)),
   paid AS (
     UPDATE orders o SET status = 'paid', payment = i.payment, closed_at = i.decided_at, updated_at = i.decided_at
     FROM items i
     WHERE o.id = i.order_id AND o.xmin = i.order_version::xid AND o.status = i.order_status
       AND EXISTS (SELECT FROM transactions t WHERE t.id = i.deposit_id AND t.xmin = i.deposit_version::xid AND t.status = i.deposit_status)
     RETURNING i.item),
   decided AS (
     UPDATE transactions t SET status = i.outcome, order_id = i.order_id,
       candidate_order_ids = ARRAY(SELECT c.id FROM jsonb_array_elements_text(i.candidate_order_ids) WITH ORDINALITY AS c(id, n) ORDER BY c.n),
       decision = i.decision, decided_at = i.decided_at, updated_at = i.decided_at
     FROM items i
     WHERE t.id = i.deposit_id AND t.xmin = i.deposit_version::xid AND t.status = i.deposit_status
       AND (i.order_id IS NULL OR i.item IN (SELECT item FROM paid))
     RETURNING i.item::int AS "item", ${transactionFields('t')}),
   claimed AS (${inboxClaimSql({ consumer: 'i.consumer', messageId: 'i.message_id', processedAt: 'i.started_at' }, 'FROM items i WHERE i.item IN (SELECT item FROM decided)')}),
   recorded AS (
     INSERT INTO events (id, organisation_id, mode, bank_account_id, type, data, created_at)
     SELECT e.id, i.organisation_id, i.mode, i.bank_account_id, e.type, e.data, i.decided_at
     FROM unnest(${p.eventItem}::int[], ${p.eventId}::text[], ${p.eventType}::text[], ${p.eventData}::jsonb[]) WITH ORDINALITY AS e(item, id, type, data, n)
     JOIN items i ON i.item = e.item
     WHERE e.item IN (SELECT item FROM decided)
     ORDER BY e.n),
   queued AS (${outboxInsert(
     p,
     sql`u.message_id IN (SELECT e.id FROM unnest(${p.eventItem}::int[], ${p.eventId}::text[]) AS e(item, id) WHERE e.item IN (SELECT item FROM decided))`,
     { leased: true },
   )})
   SELECT d.* FROM (SELECT decision_written_whole(NOT EXISTS (SELECT FROM paid WHERE item NOT IN (SELECT item FROM decided)))) AS whole
   LEFT JOIN decided d ON true`,
);

function writeDecisionsBatchedValues(written: DecisionRows[]): WriteDecisionsBatchedValues {
  const decisions = written.map(({ decided, paying, candidateOrderIds }): DecisionColumns => {
    const { pending, decision, claim, ctx } = decided;
    return {
      depositId: pending.deposit.id,
      depositVersion: pending.version,
      depositStatus: 'pending',
      outcome: decision.outcome,
      orderId: paying?.order.id ?? null,
      orderVersion: paying?.order.version ?? null,
      // Only an open order is paid by a decision, whatever was read.
      orderStatus: paying === undefined ? null : 'open',
      payment: paying === undefined ? null : JSON.stringify(paying.payment),
      candidateOrderIds: JSON.stringify(candidateOrderIds),
      decision: JSON.stringify(decision.explanation),
      decidedAt: ctx.now,
      consumer: claim.consumer,
      messageId: claim.messageId,
      startedAt: ctx.startedAt,
      organisationId: pending.deposit.organisationId,
      mode: modeOf(pending.deposit),
      bankAccountId: pending.deposit.bankAccountId,
    };
  });
  const events = written.flatMap((w, i) =>
    w.events.map((event, n): EventColumns => ({ eventItem: i + 1, eventId: w.eventIds[n]!, eventType: event.type, eventData: JSON.stringify(event.data) })),
  );
  return { ...columns(decisions), ...columns(events), ...outboxValues(written.flatMap((w) => w.announcements)) };
}

/**
 * Writes new deposits' decisions and their events in one statement, which `db` must run on its
 * own. Resolves, in the order given, with each deposit as decided, or null for one whose rows
 * changed since the read (it wrote nothing). Rejects, having written nothing, with a serialization
 * failure when an order was paid but its deposit not decided. Announcements go to `handOver`.
 */
export async function writeDecisionsBatched(db: Sql, decided: DecidedDeposit[], handOver: OutboxHandOver): Promise<(TransactionRow | null)[]> {
  if (decided.length === 0) return [];
  const written = decided.map(decisionRows);
  const rows = await db.rows(writeDecisionsBatchedQuery, writeDecisionsBatchedValues(written));
  // The LEFT JOIN gives a row of NULLs when no deposit was decided.
  const byItem = new Map(rows.flatMap(({ item, ...row }) => (item === null ? [] : [[item, row as TransactionRow] as const])));
  handOver(written.flatMap((w, i) => (byItem.has(i + 1) ? w.announcements : [])));
  return decided.map((_, i) => byItem.get(i + 1) ?? null);
}

/** At most this many decisions written by one statement. */
export const DECISIONS_PER_STATEMENT = 50;

/** SQLSTATE of `decision_written_whole`'s refusal. */
const SERIALIZATION_FAILURE = '40001';

/** Writes decisions made together (one account's, under one hold of its lock); one result per decision. */
export type WriteDecisions = (decided: readonly DecidedDeposit[]) => Promise<TransactionRow>[];

/**
 * Writes decisions with those made while the statement before them ran (a `BatchWriter`): each
 * result resolves with the deposit as decided, or rejects with StaleDecisionError, having written
 * nothing, when its rows changed since the read. A failed batch is written again decision by
 * decision, so that only the stale one fails. Each decision carries its own trace.
 */
export function writeDecisionsInBatches(db: Sql, handOver: OutboxHandOver): WriteDecisions {
  const batches = new BatchWriter((decided: DecidedDeposit[]) => writeDecisionsBatched(db, decided, handOver), DECISIONS_PER_STATEMENT);
  return (decided) =>
    batches.submitEach(decided).map((writing, i) => {
      const { pending, decision } = decided[i]!;
      const orderId = decision.outcome === 'confirmed' ? decision.orderId : undefined;
      const changed = () =>
        new StaleDecisionError(`deposit ${pending.deposit.id}${orderId === undefined ? '' : ` or order ${orderId}`} changed since the decision read it`);
      return writing.then(
        (written) => {
          if (written === null) throw changed();
          return written;
        },
        (error: unknown) => {
          throw (error as { code?: unknown }).code === SERIALIZATION_FAILURE ? changed() : error;
        },
      );
    });
}
