import { AppError, EXCHANGES, LIMITS, PAYMENT_TOKEN_LENGTH, ROUTING_KEYS, newId, randomBase62, type Mode, type NewEvent, type OrderRegistered } from '@pmatch/contracts';
import type { OrderRow, PrismaClient } from './client';
import { eventAnnouncements, outboxInsert, outboxParameters, recordEvents, type OutboxMessage } from './events';
import { orderFields } from './rows';
import { asSql, statement, type SqlOrPrisma } from './sql';
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
 * The order (unless its external_id is taken), its `order.created` event and their outbox rows as
 * one statement: atomic without a transaction of the caller's. Parameters: `newOrderValues` ($1 to
 * $14), the outbox arrays ($15 to $18), the event id and its data.
 */
const insertOrderAnnouncedStatement = statement(
  'db.insert_order_announced_unless_external_id_taken',
  `WITH inserted AS (${orderInsert(true)}),
   recorded AS (
     INSERT INTO events (id, organisation_id, mode, bank_account_id, type, data, created_at)
     SELECT $19, $2, $3, $4, 'order.created', $20::jsonb, $14 FROM inserted),
   queued AS (${outboxInsert(15, 'EXISTS (SELECT FROM inserted)')})
   SELECT * FROM inserted`,
);

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
 * is made from the values inserted, as `orderView` would make it from the row.
 */
export async function insertOrderUnlessExternalIdTaken(sql: SqlOrPrisma, order: NewOrder, now: Date, publicBaseUrl: string): Promise<OrderRow | null> {
  const inserting = newOrderRow(order, now);
  const created = orderCreated(inserting, publicBaseUrl);
  const { ids, announcements } = eventAnnouncements({ organisationId: order.organisationId, mode: order.mode }, [created]);
  const [row] = await asSql(sql).rows<OrderRow>(insertOrderAnnouncedStatement, [
    ...newOrderValues(inserting),
    ...outboxParameters([...announcements, orderRegisteredMessage(inserting.id, order.bankAccountId)]),
    ids[0],
    JSON.stringify(created.data),
  ]);
  return row ?? null;
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

/** Asks the matcher to re-examine unmatched deposits a new order could explain (spec "Late orders"). */
function orderRegisteredMessage(orderId: string, bankAccountId: string): OutboxMessage {
  const registered: OrderRegistered = { order_id: orderId, bank_account_id: bankAccountId };
  return { exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.orderRegistered, payload: registered, messageId: `registered_${orderId}` };
}

async function announceNewOrder(tx: SqlOrPrisma, row: OrderRow, now: Date, publicBaseUrl: string): Promise<void> {
  await recordEvents(
    tx,
    { organisationId: row.organisationId, mode: modeOf(row), bankAccountId: row.bankAccountId, at: now },
    [orderCreated(row, publicBaseUrl)],
    [orderRegisteredMessage(row.id, row.bankAccountId)],
  );
}
