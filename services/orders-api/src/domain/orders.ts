import { LIMITS, Payment, type CreateOrderRequest } from '@pmatch/contracts';
import type { OrderRow } from '@pmatch/db';

/**
 * Whether a repeated create with an external_id already used asks for the same order. Only what
 * the request states is compared: an omitted field took its default the first time. An order on
 * a dedicated account (`bankAccountId` null) is the same when it asked for one, for the same buyer.
 */
export function sameOrderContent(existing: OrderRow, request: CreateOrderRequest, bankAccountId: string | null): boolean {
  const sameMetadata = request.metadata === undefined || canonical(request.metadata) === canonical(existing.metadata);
  return (
    Number(existing.amount) === request.amount &&
    existing.payerName === request.payer_name &&
    existing.itemName === request.item_name &&
    (bankAccountId === null
      ? existing.dedicated && request.dedicated_account === true && existing.customerReference === (request.customer_reference ?? null)
      : existing.bankAccountId === bankAccountId && !existing.dedicated) &&
    sameMetadata &&
    (request.ordered_at === undefined || new Date(request.ordered_at).getTime() === existing.orderedAt.getTime()) &&
    (request.expires_at === undefined || new Date(request.expires_at).getTime() === existing.expiresAt.getTime())
  );
}

function canonical(value: unknown): string {
  const record = (value ?? {}) as Record<string, unknown>;
  return JSON.stringify(
    Object.keys(record)
      .sort()
      .map((k) => [k, record[k]]),
  );
}

/** Whether the order's payment is older than the API's reversal window (after it, only the console reverses, with a reason). */
export function pastReversalWindow(order: Pick<OrderRow, 'payment'>, now: Date): boolean {
  const payment = Payment.safeParse(order.payment);
  return payment.success && now.getTime() - Date.parse(payment.data.matched_at) > LIMITS.reversalWindowMs;
}
