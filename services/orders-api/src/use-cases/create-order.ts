import { AppError, withoutControlCharacters, type CreateOrderRequest, type Order } from '@pmatch/contracts';
import { insertOrderUnlessExternalIdTaken, orderTimes, orderView, type CachedKey, type NewOrder, type OrderRow, type Sql } from '@pmatch/db';
import type { Actor } from '../domain/actor';
import { resolveBankAccount } from '../domain/api-key-auth';
import { sameOrderContent } from '../domain/orders';
import { findOrderByExternalId } from '../data/orders';
import type { OrdersApiDeps } from './deps';
import { answerOnce, type IdempotentRequest } from './idempotency';

export interface OrderCreated {
  order: Order;
  /** False when the external_id was taken by the same order, which is answered instead. */
  created: boolean;
  /** The answer stored under the idempotency key. */
  replayed: boolean;
}

/** An order asked for with a cached API key was not written: ask again with the key read now (`ApiKeys`). */
export class CachedKeyNotConfirmed extends Error {}

/**
 * Creates an order, or answers with the one its external_id names if that is the same order;
 * another order under the external_id is refused, nothing is overwritten. With `cachedKey`, the
 * order is written only if that key is unchanged, else `CachedKeyNotConfirmed`.
 */
export async function createOrder(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'publicBaseUrl' | 'outbox' | 'writeNewOrder'>,
  actor: Actor,
  asked: CreateOrderRequest,
  options: { idempotency?: IdempotentRequest | undefined; cachedKey?: CachedKey | undefined } = {},
): Promise<OrderCreated> {
  const { idempotency, cachedKey } = options;
  // Stored, shown and compared (a repeated external_id) without control and format characters.
  const request = { ...asked, payer_name: withoutControlCharacters(asked.payer_name) };
  if (request.payer_name.trim() === '') throw new AppError('parameter_invalid', 'payer_name must not be empty.', { param: 'payer_name' });
  // Only the write of an order without a transaction of its own checks a cached key.
  if (cachedKey !== undefined && idempotency !== undefined) throw new CachedKeyNotConfirmed();
  const now = deps.clock.now();
  let inTransaction = false;
  const answer = await answerOnce(deps.database, { scope: actor, idempotency, now }, async (sql, transactional) => {
    inTransaction = transactional;
    const insert = transactional
      ? (order: NewOrder) => insertOrderUnlessExternalIdTaken(sql, order, now, deps.publicBaseUrl)
      : async (order: NewOrder) => {
          const row = await deps.writeNewOrder({ order, now, ...(cachedKey === undefined ? {} : { cachedKey }) });
          // Not written: its external_id is taken, or the key changed. Only a key read now can tell.
          if (row === null && cachedKey !== undefined) throw new CachedKeyNotConfirmed();
          return row;
        };
    const { row, created } = await insertOrFind(sql, insert, actor, request, now);
    return { status: created ? 201 : 200, body: orderView(row, deps.publicBaseUrl) };
  });
  const created = answer.status === 201;
  // Orders written together hand their messages over; one written in a transaction leaves them to be claimed.
  if (created && inTransaction && !answer.replayed) deps.outbox.nudge();
  return { order: answer.body as Order, created, replayed: answer.replayed };
}

/** Its one write (`insert`) is one statement, so it needs no transaction of its own (see `answerOnce`). */
async function insertOrFind(
  sql: Sql,
  insert: (order: NewOrder) => Promise<OrderRow | null>,
  actor: Actor,
  request: CreateOrderRequest,
  now: Date,
): Promise<{ row: OrderRow; created: boolean }> {
  const bankAccountId = resolveBankAccount(actor, request.bank_account_id);
  const times = orderTimes(
    {
      orderedAt: request.ordered_at === undefined ? undefined : new Date(request.ordered_at),
      expiresAt: request.expires_at === undefined ? undefined : new Date(request.expires_at),
    },
    now,
  );
  const row = await insert({
    organisationId: actor.organisationId,
    mode: actor.mode,
    bankAccountId,
    amount: request.amount,
    payerName: request.payer_name,
    externalId: request.external_id,
    itemName: request.item_name,
    orderedAt: times.orderedAt,
    expiresAt: times.expiresAt,
    metadata: request.metadata ?? {},
    source: null,
  });
  if (row !== null) return { row, created: true };
  const existing = await findOrderByExternalId(sql, actor, request.external_id);
  if (existing === null) throw new Error('an order insert found a conflict, yet no order has its external_id');
  if (!sameOrderContent(existing, request, bankAccountId)) {
    throw new AppError('external_id_conflict', 'An order with this external_id already exists with different content.', { param: 'external_id' });
  }
  return { row: existing, created: false };
}
