import {
  AppError,
  EVENTS_PER_ANNOUNCEMENT,
  EXCHANGES,
  LIMITS,
  ORDERS_PER_REGISTRATION,
  ORDER_REGISTRATION_ID_PREFIX,
  PAYMENT_TOKEN_LENGTH,
  ROUTING_KEYS,
  newId,
  orderRegistrationId,
  randomBase62,
  type Mode,
  type NewEvent,
  type OrdersRegistered,
} from '@pmatch/contracts';
import type { OrderRow, PrismaClient } from './client';
import { OUTBOX_LEASED_UNTIL, recordEvents, type LeasedMessage, type OutboxHandOver } from './events';
import { orderFields } from './rows';
import { apiKeyAccountIds } from './keys';
import { asSql, statement, type Sql, type SqlOrPrisma } from './sql';
import { modeOf, orderView } from './views';

export interface OrderTimes {
  orderedAt: Date;
  expiresAt: Date;
}

/**
 * The time rules of every new order, from the API or a shop platform: ordered_at defaults to now
 * and may be at most 5 minutes ahead (clock skew); expires_at defaults to 14 days after
 * registration and must lie after both now and ordered_at.
 */
export function orderTimes(given: { orderedAt?: Date | undefined; expiresAt?: Date | undefined }, now: Date): OrderTimes {
  const orderedAt = given.orderedAt ?? now;
  if (orderedAt.getTime() > now.getTime() + LIMITS.orderedAtFutureToleranceMs) {
    throw new AppError('ordered_at_in_future', 'ordered_at may be at most 5 minutes in the future.', { param: 'ordered_at' });
  }
  const expiresAt = given.expiresAt ?? new Date(now.getTime() + LIMITS.defaultOrderLifetimeMs);
  if (expiresAt.getTime() <= now.getTime() || expiresAt.getTime() <= orderedAt.getTime()) {
    throw new AppError('parameter_invalid', 'expires_at must be in the future and after ordered_at.', { param: 'expires_at' });
  }
  return { orderedAt, expiresAt };
}

export interface NewOrder {
  organisationId: string;
  mode: Mode;
  bankAccountId: string;
  amount: number;
  payerName: string;
  externalId: string;
  itemName: string;
  orderedAt: Date;
  expiresAt: Date;
  metadata: Record<string, string>;
  /** `shop` for an order that came from a shop platform; null for one made through the API. */
  source: 'shop' | null;
}

/**
 * The INSERT of a new order, returning the row as an `OrderRow`: open, unpaid, its metadata as
 * JSON text. Parameters are `newOrderValues`. With `unlessExternalIdTaken`, an external_id
 * already used in the organisation and mode inserts nothing and returns no row; the INSERT waits
 * for a concurrent insert of the same external_id to commit or roll back.
 */
function orderInsert(unlessExternalIdTaken: boolean): string {
  return `INSERT INTO orders
      (id, organisation_id, mode, bank_account_id, status, amount, payer_name, external_id, item_name,
       ordered_at, expires_at, metadata, source, payment_token, created_at, updated_at)
    VALUES ($1, $2, $3, $4, 'open', $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, $14, $14)
    ${unlessExternalIdTaken ? 'ON CONFLICT (organisation_id, mode, external_id) DO NOTHING\n    ' : ''}RETURNING ${orderFields()}`;
}

const insertOrderStatement = statement('db.insert_order', orderInsert(false));

/**
 * New orders (each unless its external_id is taken), their `order.created` events and the outbox
 * rows announcing them, any number in one statement: atomic without a transaction of the
 * caller's. One array per column with one element per order: `newOrderValues`' fourteen as $1 to
 * $14, the event ids and data as $15 and $16. An order whose external_id is taken, by an order
 * stored before or by an earlier one in the same batch, writes no event; the others are written in
 * the order given, so their events' `seq` follows it.
 *
 * The messages are made here from the orders inserted, not one per order: an `event.recorded` per
 * organisation and mode (up to `EVENTS_PER_ANNOUNCEMENT` events, its id its first event's) and an
 * `order.registered` for all of them (up to `ORDERS_PER_REGISTRATION`, its id its first order's
 * `orderRegistrationId`): two outbox rows, publishes and deliveries per statement where there were two
 * per order. $17 to $20 are their exchanges and routing keys. They are inserted leased (for the
 * writer to hand over) or not (for the relay to claim), and one row answered carries them all as
 * `queued`, as inserted (the others carry null).
 *
 * $21 and $22 are each order's `CachedKey` (its id, and its accounts joined by spaces) or nulls: an
 * order with one is written only if that key is active, may write, is of the order's organisation
 * and mode, and has exactly those accounts in scope, as this statement reads them.
 */
const insertOrdersAnnounced = (leased: boolean) =>
  statement(
    `db.insert_orders_announced_unless_external_id_taken${leased ? '_leased' : ''}`,
    `WITH incoming AS (
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[],
                          $9::timestamptz[], $10::timestamptz[], $11::jsonb[], $12::text[], $13::text[], $14::timestamptz[], $15::text[], $16::jsonb[],
                          $21::text[], $22::text[])
       WITH ORDINALITY AS o(id, organisation_id, mode, bank_account_id, amount, payer_name, external_id, item_name,
                            ordered_at, expires_at, metadata, source, payment_token, created_at, event_id, event_data,
                            key_id, key_account_ids, n)),
   keys_now AS (
     SELECT k.id, k.organisation_id, k.mode, array_to_string(${apiKeyAccountIds('k')}, ' ') AS account_ids
     FROM api_keys k WHERE k.id IN (SELECT key_id FROM incoming) AND k.revoked_at IS NULL AND k.permission = 'read_write'),
   admitted AS (
     SELECT * FROM incoming i
     WHERE i.key_id IS NULL
        OR EXISTS (SELECT 1 FROM keys_now k
                   WHERE k.id = i.key_id AND k.organisation_id = i.organisation_id AND k.mode = i.mode AND k.account_ids = i.key_account_ids)),
   inserted AS (
     INSERT INTO orders
       (id, organisation_id, mode, bank_account_id, status, amount, payer_name, external_id, item_name,
        ordered_at, expires_at, metadata, source, payment_token, created_at, updated_at)
     SELECT id, organisation_id, mode, bank_account_id, 'open', amount, payer_name, external_id, item_name,
            ordered_at, expires_at, metadata, source, payment_token, created_at, created_at
     FROM admitted ORDER BY n
     ON CONFLICT (organisation_id, mode, external_id) DO NOTHING
     RETURNING ${orderFields()}),
   announced AS (SELECT * FROM incoming WHERE id IN (SELECT id FROM inserted)),
   recorded AS (
     INSERT INTO events (id, organisation_id, mode, bank_account_id, type, data, created_at)
     SELECT event_id, organisation_id, mode, bank_account_id, 'order.created', event_data, created_at FROM announced ORDER BY n),
   messages AS (
     SELECT 1 AS kind, min(n) AS n, (array_agg(event_id ORDER BY n))[1] AS message_id, $17::text AS exchange, $18::text AS routing_key,
            jsonb_build_object('organisation_id', organisation_id, 'mode', mode,
                               'events', jsonb_agg(jsonb_build_object('event_id', event_id, 'type', 'order.created') ORDER BY n)) AS payload
     FROM (SELECT *, (row_number() OVER (PARTITION BY organisation_id, mode ORDER BY n) - 1) / ${EVENTS_PER_ANNOUNCEMENT} AS chunk FROM announced) a
     GROUP BY organisation_id, mode, chunk
     UNION ALL
     SELECT 2, min(n), '${ORDER_REGISTRATION_ID_PREFIX}' || (array_agg(id ORDER BY n))[1], $19::text, $20::text,
            jsonb_build_object('orders', jsonb_agg(jsonb_build_object('order_id', id, 'bank_account_id', bank_account_id) ORDER BY n))
     FROM (SELECT *, (row_number() OVER (ORDER BY n) - 1) / ${ORDERS_PER_REGISTRATION} AS chunk FROM announced) a
     GROUP BY chunk),
   queued AS (
     INSERT INTO outbox (message_id, exchange, routing_key, payload${leased ? ', leased_until' : ''})
     SELECT message_id, exchange, routing_key, payload${leased ? `, ${OUTBOX_LEASED_UNTIL}` : ''} FROM messages ORDER BY kind, n
     RETURNING id, message_id, exchange, routing_key, payload)
   SELECT i.*, CASE WHEN row_number() OVER () = 1 THEN
            (SELECT jsonb_agg(jsonb_build_object('messageId', message_id, 'exchange', exchange, 'routingKey', routing_key, 'payload', payload) ORDER BY id) FROM queued)
          END AS queued
   FROM inserted i`,
  );
const insertOrdersAnnouncedStatement = insertOrdersAnnounced(false);
const insertOrdersAnnouncedLeasedStatement = insertOrdersAnnounced(true);

/** The parameters of `orderInsert` for a new order's row. */
function newOrderValues(row: NewOrderRow): unknown[] {
  return [
    row.id,
    row.organisationId,
    row.mode,
    row.bankAccountId,
    row.amount,
    row.payerName,
    row.externalId,
    row.itemName,
    row.orderedAt,
    row.expiresAt,
    JSON.stringify(row.metadata),
    row.source,
    row.paymentToken,
    row.createdAt,
  ];
}

/**
 * Inserts an open order with its `order.created` event and, in the same DB transaction, asks the
 * matcher to re-examine unmatched deposits the order could explain (spec "Late orders"). An
 * external_id already used fails as a unique violation (`isUniqueViolation`).
 */
export async function insertOrder(prisma: PrismaClient, order: NewOrder, now: Date, publicBaseUrl: string): Promise<OrderRow> {
  return prisma.$transaction(async (tx) => {
    const [row] = await asSql(tx).rows<OrderRow>(insertOrderStatement, newOrderValues(newOrderRow(order, now)));
    if (row === undefined) throw new Error('an order INSERT returned no row');
    await announceNewOrder(tx, row, now, publicBaseUrl);
    return row;
  });
}

/**
 * The same as one statement, unless the external_id is taken: then nothing is written and the
 * result is null (INSERT … ON CONFLICT DO NOTHING, which waits for a concurrent insert of the same
 * external_id to commit or roll back). Atomic on its own, so the caller needs no transaction
 * (saving BEGIN and COMMIT); inside one, the transaction stays usable after a conflict, so the
 * caller can read the order that holds the external_id and answer in it. The event's order object
 * is made from the values inserted, as `orderView` would make it from the row. Its outbox rows are
 * for the relay to claim once the caller's transaction committed (`OutboxRelay.nudge`).
 */
export async function insertOrderUnlessExternalIdTaken(sql: SqlOrPrisma, order: NewOrder, now: Date, publicBaseUrl: string): Promise<OrderRow | null> {
  const [row] = await insertOrders(sql, [{ order, now }], publicBaseUrl, null);
  return row ?? null;
}

/**
 * The API key a request took from a cache instead of reading it (orders-api), with the bank
 * accounts its scope had then. Whatever was decided from it is checked by the write itself.
 */
export interface CachedKey {
  id: string;
  /** As `apiKeyAccountIds` lists them. */
  accountIds: readonly string[];
}

/** A new order and when it was asked for. */
export interface NewOrderAt {
  order: NewOrder;
  now: Date;
  /** Set when the caller's key came from a cache: then the order is written only if the key is unchanged. */
  cachedKey?: CachedKey;
}

/**
 * Orders as `insertOrderUnlessExternalIdTaken` inserts one, any number in one statement; answers
 * per order, in the order given, the row inserted or null when its external_id was taken (by an
 * order stored before, or by an earlier one of the same call) or its `cachedKey` has been revoked
 * or has other accounts in scope now (the caller reads the key to tell which). The new orders' messages go to
 * `handOver` once the statement committed (`sql` must run it on its own, not in a transaction of
 * the caller's).
 */
export async function insertOrdersUnlessExternalIdTaken(sql: Sql, orders: NewOrderAt[], publicBaseUrl: string, handOver: OutboxHandOver): Promise<(OrderRow | null)[]> {
  return insertOrders(sql, orders, publicBaseUrl, handOver);
}

/** Orders in one statement; their outbox rows leased and handed over, or (null) left to be claimed. */
async function insertOrders(sql: SqlOrPrisma, orders: NewOrderAt[], publicBaseUrl: string, handOver: OutboxHandOver | null): Promise<(OrderRow | null)[]> {
  if (orders.length === 0) return [];
  const rows = orders.map(({ order, now }) => newOrderRow(order, now));
  const values = rows.map(newOrderValues);
  const inserted = await asSql(sql).rows<OrderRow & { queued: LeasedMessage[] | null }>(
    handOver === null ? insertOrdersAnnouncedStatement : insertOrdersAnnouncedLeasedStatement,
    [
      // One array per column of `newOrderValues`, one element per order.
      ...values[0]!.map((_, column) => values.map((orderValues) => orderValues[column])),
      rows.map(() => newId('event')),
      rows.map((row) => JSON.stringify(orderCreated(row, publicBaseUrl).data)),
      EXCHANGES.events,
      ROUTING_KEYS.eventRecorded,
      EXCHANGES.bank,
      ROUTING_KEYS.orderRegistered,
      orders.map(({ cachedKey }) => cachedKey?.id ?? null),
      orders.map(({ cachedKey }) => cachedKey?.accountIds.join(' ') ?? null),
    ],
  );
  // One row carries them (row_number() = 1): whichever row the server put first.
  handOver?.(inserted.find((row) => row.queued !== null)?.queued ?? []);
  const byId = new Map(inserted.map(({ queued, ...row }) => [row.id, row]));
  return rows.map((row) => byId.get(row.id) ?? null);
}

/** A new order's row as the INSERT writes it, but for `seq` (the database's). */
type NewOrderRow = Omit<OrderRow, 'seq'>;

function newOrderRow(order: NewOrder, now: Date): NewOrderRow {
  return {
    id: newId('order'),
    organisationId: order.organisationId,
    mode: order.mode,
    bankAccountId: order.bankAccountId,
    status: 'open',
    amount: BigInt(order.amount),
    payerName: order.payerName,
    externalId: order.externalId,
    itemName: order.itemName,
    orderedAt: order.orderedAt,
    expiresAt: order.expiresAt,
    closedAt: null,
    metadata: order.metadata,
    source: order.source,
    // The payment page's address: unguessable, and unrelated to the order id merchants share.
    paymentToken: randomBase62(PAYMENT_TOKEN_LENGTH),
    payment: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** A new order's `order.created` event: the order as the API shows it. */
function orderCreated(row: NewOrderRow, publicBaseUrl: string): NewEvent {
  return { type: 'order.created', data: { object: orderView(row, publicBaseUrl) } };
}

/**
 * Asks the matcher to re-examine unmatched deposits a new order could explain (spec "Late orders"):
 * the message of one order written alone, with the id the batched statement gives a batch it is first in.
 */
function orderRegisteredMessage(orderId: string, bankAccountId: string): LeasedMessage {
  const registered: OrdersRegistered = { orders: [{ order_id: orderId, bank_account_id: bankAccountId }] };
  return { exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.orderRegistered, payload: registered, messageId: orderRegistrationId(orderId) };
}

async function announceNewOrder(tx: SqlOrPrisma, row: OrderRow, now: Date, publicBaseUrl: string): Promise<void> {
  await recordEvents(
    tx,
    { organisationId: row.organisationId, mode: modeOf(row), bankAccountId: row.bankAccountId, at: now },
    [orderCreated(row, publicBaseUrl)],
    [orderRegisteredMessage(row.id, row.bankAccountId)],
  );
}
