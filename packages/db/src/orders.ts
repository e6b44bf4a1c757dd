import { AppError, EXCHANGES, LIMITS, PAYMENT_TOKEN_LENGTH, ROUTING_KEYS, newId, randomBase62, type Mode, type OrderRegistered } from '@pmatch/contracts';
import type { OrderRow, Prisma, PrismaClient, Tx } from './client';
import { recordEvents } from './events';
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
 * Inserts an open order with its `order.created` event and, in the same DB transaction, asks the
 * matcher to re-examine unmatched deposits the order could explain (spec "Late orders").
 */
export async function insertOrder(prisma: PrismaClient, order: NewOrder, now: Date, publicBaseUrl: string): Promise<OrderRow> {
  return prisma.$transaction(async (tx) => {
    const row = await tx.order.create({ data: orderColumns(order, now) });
    await announceNewOrder(tx, row, now, publicBaseUrl);
    return row;
  });
}

/**
 * The same in the caller's DB transaction, unless the external_id is taken: then nothing is
 * written and the result is null (INSERT … ON CONFLICT DO NOTHING, which waits for a concurrent
 * insert of the same external_id to commit or roll back). The transaction stays usable, so the
 * caller can read the order that holds the external_id and answer in the same transaction.
 */
export async function insertOrderUnlessExternalIdTaken(tx: Tx, order: NewOrder, now: Date, publicBaseUrl: string): Promise<OrderRow | null> {
  const [row] = await tx.order.createManyAndReturn({ data: [orderColumns(order, now)], skipDuplicates: true });
  if (row === undefined) return null;
  await announceNewOrder(tx, row, now, publicBaseUrl);
  return row;
}

function orderColumns(order: NewOrder, now: Date) {
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
    metadata: order.metadata as Prisma.InputJsonValue,
    source: order.source,
    // The payment page's address: unguessable, and unrelated to the order id merchants share.
    paymentToken: randomBase62(PAYMENT_TOKEN_LENGTH),
    createdAt: now,
    updatedAt: now,
  };
}

async function announceNewOrder(tx: Tx, row: OrderRow, now: Date, publicBaseUrl: string): Promise<void> {
  const registered: OrderRegistered = { order_id: row.id, bank_account_id: row.bankAccountId };
  await recordEvents(
    tx,
    { organisationId: row.organisationId, mode: modeOf(row), bankAccountId: row.bankAccountId, at: now },
    [{ type: 'order.created', data: { object: orderView(row, publicBaseUrl) } }],
    [{ exchange: EXCHANGES.bank, routingKey: ROUTING_KEYS.orderRegistered, payload: registered, messageId: `registered_${row.id}` }],
  );
}
