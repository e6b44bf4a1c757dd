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
  newTransferCode,
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
import { asSql, columns, sql, preparedQuery, type Columns, type Sql, type SqlOrPrisma } from './sql';
import { modeOf, orderObject } from './api-objects';

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
  /** `shop` for an order that came from a shop platform, `payment_link` for one a buyer made at a link; null for one made through the API. */
  source: 'shop' | 'payment_link' | null;
  /** The link of an order with source `payment_link`. */
  paymentLinkId?: string | null;
  /** On a dedicated transfer account given to it (or to its buyer, `customerReference`). */
  dedicated?: boolean;
  /** The buyer whose dedicated account the order is on (継続型). */
  customerReference?: string | null;
}

/** A new order's row as the INSERT writes it, but for `seq` (the database's) and its transfer code (chosen by the INSERT). */
type NewOrderRow = Omit<OrderRow, 'seq'>;

/** Random codes offered per new order: the INSERT takes the first that is free on the account. */
const TRANSFER_CODES_OFFERED = 8;

/**
 * Codes to offer each of `count` orders written by one statement, space-separated: no code is
 * offered twice in the statement, since `first_free_transfer_code` cannot see the rows the same
 * statement writes, and two orders of one account given one code would fail the whole statement.
 */
export function transferCodesOffered(count: number): string[] {
  const codes = new Set<string>();
  while (codes.size < count * TRANSFER_CODES_OFFERED) codes.add(newTransferCode());
  const all = [...codes];
  return Array.from({ length: count }, (_, i) => all.slice(i * TRANSFER_CODES_OFFERED, (i + 1) * TRANSFER_CODES_OFFERED).join(' '));
}

/** The code a new order gets: the first of those offered that is free on its account (`o`, the incoming order). */
const CHOSEN_TRANSFER_CODE = `first_free_transfer_code(o.bank_account_id, string_to_array(o.codes, ' '), o.created_at)`;

/** The columns of a new order as the INSERTs write them. */
interface NewOrderValues {
  id: string;
  organisationId: string;
  mode: string;
  bankAccountId: string;
  amount: bigint;
  payerName: string;
  externalId: string;
  itemName: string;
  orderedAt: Date;
  expiresAt: Date;
  metadata: string;
  source: string | null;
  paymentLinkId: string | null;
  paymentToken: string;
  createdAt: Date;
  dedicated: boolean;
  customerReference: string | null;
  /** The transfer codes offered, space-separated (`CHOSEN_TRANSFER_CODE`). */
  codes: string;
}

function newOrderValues(row: NewOrderRow, codes: string): NewOrderValues {
  return {
    id: row.id,
    organisationId: row.organisationId,
    mode: row.mode,
    bankAccountId: row.bankAccountId,
    amount: row.amount,
    payerName: row.payerName,
    externalId: row.externalId,
    itemName: row.itemName,
    orderedAt: row.orderedAt,
    expiresAt: row.expiresAt,
    metadata: JSON.stringify(row.metadata),
    source: row.source,
    paymentLinkId: row.paymentLinkId,
    paymentToken: row.paymentToken,
    createdAt: row.createdAt,
    dedicated: row.dedicated,
    customerReference: row.customerReference,
    codes,
  };
}

/** An open order, returning its row; an external_id already used fails as a unique violation. */
const insertOrderQuery = preparedQuery<NewOrderValues, OrderRow>(
  'db.insert_order',
  (p) => sql`INSERT INTO orders
      (id, organisation_id, mode, bank_account_id, status, amount, payer_name, external_id, item_name,
       ordered_at, expires_at, metadata, source, payment_link_id, payment_token, created_at, updated_at, transfer_code, dedicated, customer_reference)
    SELECT o.id, o.organisation_id, o.mode, o.bank_account_id, 'open', o.amount, o.payer_name, o.external_id, o.item_name,
           o.ordered_at, o.expires_at, o.metadata, o.source, o.payment_link_id, o.payment_token, o.created_at, o.created_at, ${CHOSEN_TRANSFER_CODE},
           o.dedicated, o.customer_reference
    FROM (SELECT ${p.id}::text AS id, ${p.organisationId}::text AS organisation_id, ${p.mode}::text AS mode, ${p.bankAccountId}::text AS bank_account_id,
                 ${p.amount}::bigint AS amount, ${p.payerName}::text AS payer_name, ${p.externalId}::text AS external_id, ${p.itemName}::text AS item_name,
                 ${p.orderedAt}::timestamptz AS ordered_at, ${p.expiresAt}::timestamptz AS expires_at, ${p.metadata}::jsonb AS metadata,
                 ${p.source}::text AS source, ${p.paymentLinkId}::text AS payment_link_id, ${p.paymentToken}::text AS payment_token,
                 ${p.createdAt}::timestamptz AS created_at, ${p.codes}::text AS codes,
                 ${p.dedicated}::boolean AS dedicated, ${p.customerReference}::text AS customer_reference) o
    RETURNING ${orderFields()}`,
);

/** One array per column of `NewOrderValues` and of each order's event and `CachedKey` (or nulls), then the messages' addresses. */
type NewOrdersValues = Columns<NewOrderValues & { eventId: string; eventData: string; keyId: string | null; keyAccountIds: string | null }> & {
  eventsExchange: string;
  eventRecordedRoutingKey: string;
  bankExchange: string;
  orderRegisteredRoutingKey: string;
};

/**
 * New orders (each unless its external_id is taken, by an order stored before or an earlier one
 * of the batch, or its `CachedKey` is no longer as cached), their `order.created` events and the
 * messages announcing them, in one statement: one `event.recorded` per organisation and mode (up
 * to `EVENTS_PER_ANNOUNCEMENT` events) and one `order.registered` (up to `ORDERS_PER_REGISTRATION`
 * orders). The first row answered carries the outbox rows as `queued`; `leased` as in `outboxInsert`.
 */
const insertOrdersQuery = (leased: boolean) =>
  preparedQuery<NewOrdersValues, OrderRow & { queued: LeasedMessage[] | null }>(
    `db.insert_orders_announced_unless_external_id_taken${leased ? '_leased' : ''}`,
    (p) => sql`WITH incoming AS (
     SELECT * FROM unnest(${p.id}::text[], ${p.organisationId}::text[], ${p.mode}::text[], ${p.bankAccountId}::text[], ${p.amount}::bigint[],
                          ${p.payerName}::text[], ${p.externalId}::text[], ${p.itemName}::text[], ${p.orderedAt}::timestamptz[],
                          ${p.expiresAt}::timestamptz[], ${p.metadata}::jsonb[], ${p.source}::text[], ${p.paymentToken}::text[],
                          ${p.createdAt}::timestamptz[], ${p.eventId}::text[], ${p.eventData}::jsonb[], ${p.keyId}::text[], ${p.keyAccountIds}::text[],
                          ${p.codes}::text[], ${p.dedicated}::boolean[], ${p.customerReference}::text[])
       WITH ORDINALITY AS o(id, organisation_id, mode, bank_account_id, amount, payer_name, external_id, item_name,
                            ordered_at, expires_at, metadata, source, payment_token, created_at, event_id, event_data,
                            key_id, key_account_ids, codes, dedicated, customer_reference, n)),
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
        ordered_at, expires_at, metadata, source, payment_token, created_at, updated_at, transfer_code, dedicated, customer_reference)
     SELECT id, organisation_id, mode, bank_account_id, 'open', amount, payer_name, external_id, item_name,
            ordered_at, expires_at, metadata, source, payment_token, created_at, created_at, ${CHOSEN_TRANSFER_CODE}, dedicated, customer_reference
     FROM admitted o ORDER BY n
     ON CONFLICT (organisation_id, mode, external_id) DO NOTHING
     RETURNING ${orderFields()}),
   announced AS (SELECT i.*, o."transferCode" AS transfer_code, o."transferTo" AS transfer_to FROM incoming i JOIN inserted o ON o.id = i.id),
   recorded AS (
     INSERT INTO events (id, organisation_id, mode, bank_account_id, type, data, created_at)
     SELECT event_id, organisation_id, mode, bank_account_id, 'order.created',
            jsonb_set(jsonb_set(event_data, '{object,transfer_code}', COALESCE(to_jsonb(transfer_code), 'null'::jsonb)), '{object,transfer_to}', transfer_to), created_at
     FROM announced ORDER BY n),
   messages AS (
     SELECT 1 AS kind, min(n) AS n, (array_agg(event_id ORDER BY n))[1] AS message_id,
            ${p.eventsExchange}::text AS exchange, ${p.eventRecordedRoutingKey}::text AS routing_key,
            jsonb_build_object('organisation_id', organisation_id, 'mode', mode,
                               'events', jsonb_agg(jsonb_build_object('event_id', event_id, 'type', 'order.created') ORDER BY n)) AS payload
     FROM (SELECT *, (row_number() OVER (PARTITION BY organisation_id, mode ORDER BY n) - 1) / ${EVENTS_PER_ANNOUNCEMENT} AS chunk FROM announced) a
     GROUP BY organisation_id, mode, chunk
     UNION ALL
     SELECT 2, min(n), '${ORDER_REGISTRATION_ID_PREFIX}' || (array_agg(id ORDER BY n))[1], ${p.bankExchange}::text, ${p.orderRegisteredRoutingKey}::text,
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
const insertOrdersQueries = { unleased: insertOrdersQuery(false), leased: insertOrdersQuery(true) };

/**
 * Inserts an open order with its `order.created` event and, in the same DB transaction, asks the
 * matcher to re-examine unmatched deposits the order could explain (a late order). An
 * external_id already used fails as a unique violation (`isUniqueViolation`).
 */
export async function insertOrder(prisma: PrismaClient, order: NewOrder, now: Date, publicBaseUrl: string): Promise<OrderRow> {
  return prisma.$transaction((tx) => insertOrderAnnounced(tx, order, now, publicBaseUrl));
}

/**
 * `insertOrder` inside the caller's transaction (its other writes commit with the order or not at
 * all); its outbox rows are for the relay to claim once that transaction committed.
 */
export async function insertOrderAnnounced(tx: SqlOrPrisma, order: NewOrder, now: Date, publicBaseUrl: string): Promise<OrderRow> {
  const [row] = await asSql(tx).rows(insertOrderQuery, newOrderValues(newOrderRow(order, now), transferCodesOffered(1)[0]!));
  if (row === undefined) throw new Error('an order INSERT returned no row');
  await announceNewOrder(tx, row, now, publicBaseUrl);
  return row;
}

/**
 * The same as one statement, unless the external_id is taken (by a committed order, or one that
 * commits while this waits): then nothing is written and the result is null, and a transaction
 * around it stays usable. Its outbox rows are for the relay to claim once the caller's
 * transaction committed (`OutboxRelay.nudge`).
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
 * Orders as `insertOrderUnlessExternalIdTaken` inserts one, any number in one statement that `sql`
 * runs on its own; answers per order the row inserted, or null when its external_id was taken
 * (also by an earlier one of the call) or its `cachedKey` changed since it was cached. The new
 * orders' messages go to `handOver` once the statement committed.
 */
export async function insertOrdersUnlessExternalIdTaken(
  sql: Sql,
  orders: NewOrderAt[],
  publicBaseUrl: string,
  handOver: OutboxHandOver,
): Promise<(OrderRow | null)[]> {
  return insertOrders(sql, orders, publicBaseUrl, handOver);
}

/** Orders in one statement; their outbox rows leased and handed over, or (null) left to be claimed. */
async function insertOrders(sql: SqlOrPrisma, orders: NewOrderAt[], publicBaseUrl: string, handOver: OutboxHandOver | null): Promise<(OrderRow | null)[]> {
  if (orders.length === 0) return [];
  const rows = orders.map(({ order, now }) => newOrderRow(order, now));
  const offered = transferCodesOffered(rows.length);
  const incoming = rows.map((row, i) => ({
    ...newOrderValues(row, offered[i]!),
    eventId: newId('event'),
    eventData: JSON.stringify(orderCreated(row, publicBaseUrl).data),
    keyId: orders[i]!.cachedKey?.id ?? null,
    keyAccountIds: orders[i]!.cachedKey?.accountIds.join(' ') ?? null,
  }));
  const inserted = await asSql(sql).rows(handOver === null ? insertOrdersQueries.unleased : insertOrdersQueries.leased, {
    ...columns(incoming),
    eventsExchange: EXCHANGES.events,
    eventRecordedRoutingKey: ROUTING_KEYS.eventRecorded,
    bankExchange: EXCHANGES.bank,
    orderRegisteredRoutingKey: ROUTING_KEYS.orderRegistered,
  });
  // One row carries them (row_number() = 1): whichever row the server put first.
  handOver?.(inserted.find((row) => row.queued !== null)?.queued ?? []);
  const byId = new Map(inserted.map(({ queued, ...row }) => [row.id, row]));
  return rows.map((row) => byId.get(row.id) ?? null);
}

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
    paymentLinkId: order.paymentLinkId ?? null,
    // The payment page's address: unguessable, and unrelated to the order id merchants share.
    paymentToken: randomBase62(PAYMENT_TOKEN_LENGTH),
    // Chosen by the INSERT among the codes offered; the event it records carries the code chosen.
    transferCode: null,
    dedicated: order.dedicated ?? false,
    customerReference: order.customerReference ?? null,
    // Written by the INSERT's trigger from the account; the event it records carries it.
    transferTo: null,
    payment: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** A new order's `order.created` event: the order as the API shows it. */
function orderCreated(row: NewOrderRow, publicBaseUrl: string): NewEvent {
  return { type: 'order.created', data: { object: orderObject(row, publicBaseUrl) } };
}

/**
 * Asks the matcher to re-examine unmatched deposits a new order could explain (a late order):
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
