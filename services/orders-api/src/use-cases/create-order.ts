import { AppError, withoutControlCharacters, type CreateOrderRequest, type Order } from '@pmatch/contracts';
import { insertOrderUnlessExternalIdTaken, orderTimes, orderObject, type CachedKey, type NewOrder, type OrderRow, type Sql } from '@pmatch/db';
import type { Actor } from '../domain/actor';
import { resolveBankAccount } from '../domain/api-key-auth';
import { sameOrderContent } from '../domain/orders';
import { accountForNewOrder, recordGiven } from '../data/dedicated-accounts';
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
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'publicBaseUrl' | 'outbox' | 'writeNewOrder' | 'dedicatedAccountRestMs'>,
  actor: Actor,
  asked: CreateOrderRequest,
  options: { idempotency?: IdempotentRequest | undefined; cachedKey?: CachedKey | undefined } = {},
): Promise<OrderCreated> {
  const { idempotency, cachedKey } = options;
  // Stored, shown and compared (a repeated external_id) without control and format characters.
  const request = { ...asked, payer_name: withoutControlCharacters(asked.payer_name) };
  if (request.payer_name.trim() === '') throw new AppError('parameter_invalid', 'payer_name must not be empty.', { param: 'payer_name' });
  const dedicated = dedicatedAccountAsked(actor, request);
  // Only the write of an order without a transaction of its own checks a cached key.
  if (cachedKey !== undefined && (idempotency !== undefined || dedicated)) throw new CachedKeyNotConfirmed();
  const now = deps.clock.now();
  let inTransaction = false;
  const answer = await answerOnce(deps.database, { scope: actor, idempotency, now }, async (sql, transactional) => {
    if (dedicated) {
      // The account is taken and the order stored in one transaction: the idempotency key's, or its own.
      const write = (tx: Sql) => insertOnDedicatedAccount(tx, deps, actor, request, now);
      const { row, created } = transactional ? await write(sql) : await deps.database.transaction(write);
      inTransaction = true;
      return { status: created ? 201 : 200, body: orderObject(row, deps.publicBaseUrl) };
    }
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
    return { status: created ? 201 : 200, body: orderObject(row, deps.publicBaseUrl) };
  });
  const created = answer.status === 201;
  // Orders written together hand their messages over; one written in a transaction leaves them to be claimed.
  if (created && inTransaction && !answer.replayed) deps.outbox.nudge();
  return { order: answer.body as Order, created, replayed: answer.replayed };
}

/** Whether the order asks for a dedicated account; refuses what cannot go with one. */
function dedicatedAccountAsked(actor: Actor, request: CreateOrderRequest): boolean {
  if (request.dedicated_account !== true) {
    if (request.customer_reference !== undefined) {
      throw new AppError('parameter_invalid', 'customer_reference is only for an order with dedicated_account: true.', { param: 'customer_reference' });
    }
    return false;
  }
  if (request.bank_account_id !== undefined) {
    throw new AppError('parameter_invalid', 'Leave out bank_account_id with dedicated_account: the order gets an account of its own.', {
      param: 'bank_account_id',
    });
  }
  if (actor.bankAccountId !== null) {
    throw new AppError('insufficient_scope', 'This API key is limited to one bank account; dedicated accounts need a key of the whole organisation.');
  }
  return true;
}

/**
 * An order on a dedicated account, in the caller's transaction: the one its external_id names if
 * that is the same order; else the buyer's account (`customer_reference`) or a free one, taken
 * and given with the order, or 409 `no_dedicated_account_free` and nothing stored.
 */
async function insertOnDedicatedAccount(
  tx: Sql,
  deps: Pick<OrdersApiDeps, 'clock' | 'publicBaseUrl' | 'dedicatedAccountRestMs'>,
  actor: Actor,
  request: CreateOrderRequest,
  now: Date,
): Promise<{ row: OrderRow; created: boolean }> {
  const customerReference = request.customer_reference ?? null;
  const existing = await findOrderByExternalId(tx, actor, request.external_id);
  if (existing !== null) return { row: sameOrElseConflict(existing, request, null), created: false };
  const times = timesOf(request, now);
  const account = await accountForNewOrder(tx, actor, customerReference, new Date(now.getTime() - deps.dedicatedAccountRestMs));
  if (account === null) {
    throw new AppError(
      'no_dedicated_account_free',
      'No dedicated transfer account is free; add accounts to the pool (ops bank-account add --dedicated) or retry later.',
    );
  }
  const row = await insertOrderUnlessExternalIdTaken(
    tx,
    { ...newOrderOf(actor, request, account.bankAccountId, times), dedicated: true, customerReference },
    now,
    deps.publicBaseUrl,
  );
  if (row === null) {
    // Taken meanwhile by an order that committed while this one waited: nothing was given.
    const taken = await findOrderByExternalId(tx, actor, request.external_id);
    if (taken === null) throw new Error('an order insert found a conflict, yet no order has its external_id');
    return { row: sameOrElseConflict(taken, request, null), created: false };
  }
  if (account.new) await recordGiven(tx, { bankAccountId: account.bankAccountId, orderId: row.id, customerReference, at: now });
  return { row, created: true };
}

function timesOf(request: CreateOrderRequest, now: Date) {
  return orderTimes(
    {
      orderedAt: request.ordered_at === undefined ? undefined : new Date(request.ordered_at),
      expiresAt: request.expires_at === undefined ? undefined : new Date(request.expires_at),
    },
    now,
  );
}

function newOrderOf(actor: Actor, request: CreateOrderRequest, bankAccountId: string, times: { orderedAt: Date; expiresAt: Date }): NewOrder {
  return {
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
  };
}

/** The order an external_id already names, when the request asks for the same; else 409 `external_id_conflict`. */
function sameOrElseConflict(existing: OrderRow, request: CreateOrderRequest, bankAccountId: string | null): OrderRow {
  if (!sameOrderContent(existing, request, bankAccountId)) {
    throw new AppError('external_id_conflict', 'An order with this external_id already exists with different content.', { param: 'external_id' });
  }
  return existing;
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
  const row = await insert(newOrderOf(actor, request, bankAccountId, timesOf(request, now)));
  if (row !== null) return { row, created: true };
  const existing = await findOrderByExternalId(sql, actor, request.external_id);
  if (existing === null) throw new Error('an order insert found a conflict, yet no order has its external_id');
  return { row: sameOrElseConflict(existing, request, bankAccountId), created: false };
}
