import type { Order } from '@pmatch/client';

/** What the shop knows of one purchase. A real shop keeps this in its own database. */
export interface Purchase {
  /** The shop's own id, sent as the order's external_id. */
  id: string;
  orderId: string;
  paymentUrl: string;
  /** The sender name the buyer's bank transfer must carry: the order's `payer_name_bank_form`. */
  transferAs: string | null;
  status: Order['status'];
  /** When the shop learnt the order was paid: the moment to ship. */
  paidAt: string | null;
}

/**
 * The shop's records: purchases, and the webhook events already handled. In memory here; a real
 * shop writes both in one database transaction, so an event is never half handled.
 */
export class Shop {
  private readonly purchases = new Map<string, Purchase>();
  private readonly byOrder = new Map<string, string>();
  private readonly handled = new Set<string>();
  /** How many deliveries were dropped as repeats of an event already handled. */
  repeatsIgnored = 0;

  add(purchase: Purchase): void {
    this.purchases.set(purchase.id, purchase);
    this.byOrder.set(purchase.orderId, purchase.id);
  }

  purchase(id: string): Purchase | undefined {
    return this.purchases.get(id);
  }

  purchaseOfOrder(orderId: string): Purchase | undefined {
    const id = this.byOrder.get(orderId);
    return id === undefined ? undefined : this.purchases.get(id);
  }

  /** Takes the order as the API says it is now, whatever order the events arrived in. */
  applyOrder(order: Order, now: Date): void {
    const purchase = this.purchaseOfOrder(order.id);
    if (purchase === undefined) return;
    const paid = order.status === 'paid' || order.status === 'paid_outside';
    purchase.status = order.status;
    purchase.paidAt = paid ? (purchase.paidAt ?? now.toISOString()) : null;
  }

  wasHandled(eventId: string): boolean {
    return this.handled.has(eventId);
  }

  markHandled(eventId: string): void {
    this.handled.add(eventId);
  }
}
