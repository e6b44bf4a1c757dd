import type { TestSystem } from '@pmatch/testkit';
import type { ReceivedRequest } from '../../../services/webhook-dispatcher/test/support/receiver';
import { queueDepths, readyMessages } from './infrastructure';
import type { LoadGenerator, Scenario } from './load';

/** What the system must show once it has recovered; every list of violations must be empty. */
export interface Invariants {
  counts: {
    scenarios: number;
    abandonedScenarios: number;
    notificationsSent: number;
    notificationsAnswered2xx: number;
    notificationsRefused: number;
    requestAttempts: number;
    unansweredAttempts: number;
    stored: number;
    decided: number;
    decisions: Record<string, number>;
    ordersCreated: number;
    ordersPaid: number;
    eventsRecorded: number;
    eventsDelivered: number;
    webhookRequests: number;
    /** Delivery attempts that failed, by error: the receiver is healthy, so each is the fault's (or a bug's) doing. */
    failedAttempts: Record<string, number>;
  };
  violations: {
    /** Notifications sent but never answered 2xx (retried with the same bank reference until the deadline): silently dropped. */
    unanswered: string[];
    /** Scenarios whose orders could not be created (a 4xx, or no 2xx before the deadline), so their notifications were never sent. */
    abandonedScenarios: string[];
    /** A notification answered 2xx whose transaction is missing, stored twice, or answered with another id. */
    lostOrDuplicated: string[];
    /** Stored deposits not decided. */
    undecided: string[];
    /** Deposits without exactly one transaction.deposited event. */
    depositedEvents: string[];
    /**
     * Deposits decided more (or less) than once by their other marks: a transaction.held event
     * for a held deposit only, and one; an order.paid event naming a confirmed deposit only, and one;
     * exactly one processing of the matcher's deposit consumer in the inbox.
     */
    decidedOnce: string[];
    /** Orders with two confirmed deposits, or paid by a deposit that does not confirm them. */
    doublePaidOrders: string[];
    /** Deposits named as payment by two orders, or confirmed with no paid order. */
    doubleUsedDeposits: string[];
    /** Orders with more than one order.paid event. */
    orderPaidEvents: string[];
    /** Scenarios decided otherwise than one at a time without faults would decide them. */
    wrongDecisions: string[];
    /** Notifications refused with a 4xx that no fault explains (orders refused so are in abandonedScenarios). */
    refused: string[];
    /** Requests answered 500: a failure not recognised as the fault's doing (that answers 503). */
    internalErrors: string[];
    /** Outbox rows never published. */
    unpublished: string[];
    /** Queues (or dead-letter queues) with messages left. */
    undrainedQueues: string[];
    /** Events no webhook request carried. */
    undelivered: string[];
  };
}

export async function checkInvariants(system: TestSystem, load: LoadGenerator, received: ReceivedRequest[], amqpPrefix: string): Promise<Invariants> {
  const transactions = await system.sql<Deposit>(
    `SELECT id, bank_account_id, bank_reference, status, order_id, candidate_order_ids, decided_at FROM transactions WHERE direction = 'deposit'`,
  );
  const byReference = new Map<string, typeof transactions>();
  for (const t of transactions) {
    const key = `${t.bank_account_id}/${t.bank_reference}`;
    byReference.set(key, [...(byReference.get(key) ?? []), t]);
  }
  const notifications = load.notifications();

  const unanswered = notifications
    .filter((n) => n.transactionId === undefined && n.refused === undefined)
    .map((n) => `${n.bankReference}: no 2xx in ${n.attempts.length} attempts (last ${n.attempts.at(-1) ?? 'none'})`);
  const abandonedScenarios = load.scenarios
    .filter((s) => s.abandoned)
    .map(
      (s) => `${s.kind} scenario ${s.index}: order not created (${s.orderFailure?.status ?? '?'} ${JSON.stringify(s.orderFailure?.body ?? '').slice(0, 300)})`,
    );

  const lostOrDuplicated: string[] = [];
  for (const n of notifications) {
    if (n.transactionId === undefined) continue;
    const rows = byReference.get(`${n.bankAccountId}/${n.bankReference}`) ?? [];
    if (rows.length !== 1) lostOrDuplicated.push(`${n.bankReference}: answered 2xx (${n.transactionId}) but stored ${rows.length} time(s)`);
    else if (n.answeredIds.some((id) => id !== rows[0]!.id))
      lostOrDuplicated.push(`${n.bankReference}: answered ${n.answeredIds.join(', ')}, stored ${rows[0]!.id}`);
  }

  const undecided = transactions.filter((t) => t.status === 'pending' || t.decided_at === null).map((t) => `${t.id} (${t.bank_reference}) ${t.status}`);

  const deposited = await system.sql<{ id: string; n: number }>(
    `SELECT data->'object'->>'id' AS id, count(*)::int AS n FROM events WHERE type = 'transaction.deposited' GROUP BY 1`,
  );
  const depositedCount = new Map(deposited.map((d) => [d.id, d.n]));
  const depositedEvents = transactions
    .filter((t) => depositedCount.get(t.id) !== 1)
    .map((t) => `${t.id}: ${depositedCount.get(t.id) ?? 0} transaction.deposited event(s)`);

  const decidedOnce = await decidedOnceViolations(system, transactions);

  const doublePaidOrders = (
    await system.sql<{ order_id: string; ids: string[] }>(
      `SELECT order_id, array_agg(id) AS ids FROM transactions WHERE status = 'confirmed' GROUP BY order_id HAVING count(*) > 1`,
    )
  ).map((r) => `${r.order_id} confirmed by ${r.ids.join(', ')}`);
  const paidOrders = await system.sql<{ id: string; status: string; transaction_id: string | null }>(
    `SELECT id, status, payment->>'transaction_id' AS transaction_id FROM orders WHERE status IN ('paid', 'paid_outside') OR payment IS NOT NULL`,
  );
  const confirmedBy = new Map(transactions.filter((t) => t.status === 'confirmed').map((t) => [t.order_id, t.id]));
  for (const o of paidOrders) {
    if (o.status === 'paid' && confirmedBy.get(o.id) !== o.transaction_id)
      doublePaidOrders.push(`${o.id} paid by ${o.transaction_id}, confirmed by ${confirmedBy.get(o.id)}`);
  }
  const doubleUsedDeposits = (
    await system.sql<{ transaction_id: string; ids: string[] }>(
      `SELECT payment->>'transaction_id' AS transaction_id, array_agg(id) AS ids FROM orders WHERE payment->>'transaction_id' IS NOT NULL GROUP BY 1 HAVING count(*) > 1`,
    )
  ).map((r) => `${r.transaction_id} pays ${r.ids.join(', ')}`);
  const paidIds = new Set(paidOrders.filter((o) => o.status === 'paid').map((o) => o.id));
  for (const t of transactions) {
    if (t.status === 'confirmed' && (t.order_id === null || !paidIds.has(t.order_id)))
      doubleUsedDeposits.push(`${t.id} confirmed for ${t.order_id}, which is not paid`);
  }
  const orderPaidEvents = (
    await system.sql<{ id: string; n: number }>(
      `SELECT data->'object'->>'id' AS id, count(*)::int AS n FROM events WHERE type = 'order.paid' GROUP BY 1 HAVING count(*) > 1`,
    )
  ).map((r) => `${r.id}: ${r.n} order.paid events`);

  const statusById = new Map(transactions.map((t) => [t.id, t]));
  const wrongDecisions = load.scenarios.flatMap((s) => wrongDecision(s, statusById));

  const refused = notifications.filter((n) => n.refused).map((n) => `${n.bankReference}: ${n.refused!.status} ${JSON.stringify(n.refused!.body)}`);

  const unpublished = (await system.sql<{ message_id: string }>('SELECT message_id FROM outbox WHERE published_at IS NULL')).map((r) => r.message_id);

  const depths = await queueDepths(amqpPrefix);
  const undrainedQueues = Object.entries(depths)
    .filter(([, d]) => d.ready > 0 || d.unacked > 0)
    .map(([name, d]) => `${name}: ${d.ready} ready, ${d.unacked} unacked`);

  const events = await system.sql<{ id: string; type: string }>('SELECT id, type FROM events ORDER BY seq');
  const deliveredIds = new Set(received.map((r) => String(r.headers['webhook-id'])));
  const undelivered = events.filter((e) => !deliveredIds.has(e.id)).map((e) => `${e.id} (${e.type})`);

  const failedAttempts: Record<string, number> = {};
  for (const a of await system.sql<{ error: string | null; status_code: number | null; n: number }>(
    `SELECT error, status_code, count(*)::int AS n FROM webhook_delivery_attempts WHERE error IS NOT NULL OR status_code NOT BETWEEN 200 AND 299 GROUP BY 1, 2`,
  )) {
    failedAttempts[a.error ?? `HTTP ${a.status_code}`] = a.n;
  }
  const decisions: Record<string, number> = {};
  for (const t of transactions) decisions[t.status] = (decisions[t.status] ?? 0) + 1;
  const attempts = notifications.flatMap((n) => n.attempts);
  return {
    counts: {
      scenarios: load.scenarios.length,
      abandonedScenarios: load.scenarios.filter((s) => s.abandoned).length,
      notificationsSent: notifications.length,
      notificationsAnswered2xx: notifications.filter((n) => n.transactionId !== undefined).length,
      notificationsRefused: refused.length,
      requestAttempts: attempts.length,
      unansweredAttempts: attempts.filter((s) => s === 0 || s >= 500).length,
      stored: transactions.length,
      decided: transactions.length - undecided.length,
      decisions,
      ordersCreated: load.scenarios.reduce((n, s) => n + s.orderIds.length, 0),
      ordersPaid: paidIds.size,
      eventsRecorded: events.length,
      eventsDelivered: events.length - undelivered.length,
      webhookRequests: received.length,
      failedAttempts,
    },
    violations: {
      unanswered,
      abandonedScenarios,
      lostOrDuplicated,
      undecided,
      depositedEvents,
      decidedOnce,
      doublePaidOrders,
      doubleUsedDeposits,
      orderPaidEvents,
      wrongDecisions,
      refused,
      internalErrors: load.internalErrors.map((e) => `${e.path}: ${JSON.stringify(e.body)}`),
      unpublished,
      undrainedQueues,
      undelivered,
    },
  };
}

type Deposit = {
  id: string;
  bank_account_id: string;
  bank_reference: string;
  status: string;
  order_id: string | null;
  candidate_order_ids: string[];
  decided_at: Date | null;
};

/**
 * The marks a deposit's decision leaves besides its status, each of which a second decision would
 * double: its transaction.held event (held deposits only), the order.paid event naming it
 * (confirmed deposits only), and the matcher's processing of its deposit.received message
 * (`deposit_<id>`, or `redeliver_<id>_…` from the pending sweep) in the inbox.
 */
async function decidedOnceViolations(system: TestSystem, deposits: Deposit[]): Promise<string[]> {
  const marks = await system.sql<{ id: string; held: number; paid: number; processed: number }>(
    `SELECT t.id,
            (SELECT count(*)::int FROM events e WHERE e.type = 'transaction.held' AND e.data->'object'->>'id' = t.id) AS held,
            (SELECT count(*)::int FROM events e WHERE e.type = 'order.paid' AND e.data->'object'->'payment'->>'transaction_id' = t.id) AS paid,
            (SELECT count(*)::int FROM inbox i WHERE i.consumer = 'matcher.deposits'
               AND (i.message_id = 'deposit_' || t.id OR i.message_id LIKE 'redeliver\\_' || t.id || '\\_%')) AS processed
     FROM transactions t WHERE t.direction = 'deposit'`,
  );
  const status = new Map(deposits.map((d) => [d.id, d.status]));
  return marks.flatMap((m) => {
    const want = { held: status.get(m.id) === 'held' ? 1 : 0, paid: status.get(m.id) === 'confirmed' ? 1 : 0, processed: 1 };
    const got = { held: m.held, paid: m.paid, processed: m.processed };
    return JSON.stringify(got) === JSON.stringify(want) ? [] : [`${m.id} (${status.get(m.id)}): ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`];
  });
}

/**
 * Each scenario has amounts of its own, so without faults its decision is fixed; faults may delay
 * a decision but must never change it (the Redis lock buys good decisions, docs/decisions/0006-account-lock-for-good-decisions-database-for-safety.md).
 * Every notification of a scenario must have been answered and stored: a scenario with a
 * notification missing is wrong, never passed over.
 */
export function wrongDecision(s: Scenario, byId: Map<string, Pick<Deposit, 'status' | 'order_id' | 'candidate_order_ids'>>): string[] {
  const expectedNotifications = s.kind === 'double' ? 2 : 1;
  const decided = s.notifications.map((n) => (n.transactionId === undefined ? undefined : byId.get(n.transactionId)));
  const statuses = decided.map((t) => t?.status ?? 'missing');
  const describe = `${s.kind} scenario ${s.index} (amount ${s.amount}, orders ${s.orderIds.join(', ') || 'none'}): ${statuses.join(', ') || 'no notification'}`;
  if (s.abandoned || decided.length !== expectedNotifications || decided.some((t) => t === undefined)) return [describe];
  const deposits = decided as Pick<Deposit, 'status' | 'order_id' | 'candidate_order_ids'>[];
  const sameIds = (a: string[], b: string[]) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
  switch (s.kind) {
    case 'confirm':
      return deposits[0]!.status === 'confirmed' && deposits[0]!.order_id === s.orderIds[0] ? [] : [describe];
    case 'hold':
      // Two open orders fit exactly: held, with exactly those two as the candidates to choose from.
      return deposits[0]!.status === 'held' && deposits[0]!.order_id === null && sameIds(deposits[0]!.candidate_order_ids, s.orderIds)
        ? []
        : [`${describe}; candidates ${JSON.stringify(deposits[0]!.candidate_order_ids)}`];
    case 'unmatched':
      return deposits[0]!.status === 'unmatched' && deposits[0]!.order_id === null ? [] : [describe];
    case 'double': {
      // Two deposits for one order: exactly one pays it, the other pays nothing and is decided.
      const confirmed = deposits.filter((t) => t.status === 'confirmed');
      const other = deposits.filter((t) => t.status !== 'confirmed');
      const ok = confirmed.length === 1 && confirmed[0]!.order_id === s.orderIds[0] && other.every((t) => t.status !== 'pending' && t.order_id === null);
      return ok ? [] : [describe];
    }
  }
}

/**
 * What is left to do, read cheaply (one query, one AMQP connection), so that polling it does not
 * load the machine whose recovery it watches. All zero: time for the full check.
 */
export async function workLeft(system: TestSystem, received: ReceivedRequest[], amqpPrefix: string): Promise<Record<string, number>> {
  const [db] = await system.sql<{ pending: number; unpublished: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM transactions WHERE status = 'pending') AS pending,
            (SELECT count(*)::int FROM outbox WHERE published_at IS NULL) AS unpublished,
            (SELECT count(*)::int FROM events) AS events`,
  );
  const delivered = new Set(received.map((r) => String(r.headers['webhook-id']))).size;
  return {
    pendingDeposits: db!.pending,
    unpublishedOutbox: db!.unpublished,
    undeliveredEvents: Math.max(0, db!.events - delivered),
    queuedMessages: await readyMessages(amqpPrefix),
  };
}
