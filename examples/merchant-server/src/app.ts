import { randomUUID } from 'node:crypto';
import { ApiError, WebhookVerificationError, bankForm, type Event, type PaymentsClient, type WebhookVerifier } from '@pmatch/client';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Shop } from './shop';

export interface ShopConfig {
  client: PaymentsClient;
  /** Verifies deliveries with the webhook endpoint's signing secret. */
  verifier: WebhookVerifier;
  shop: Shop;
  item: { name: string; amount: number };
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The shop: a page to buy one item, a checkout that registers the order and sends the buyer to
 * its payment page, and the webhook receiver that learns when it is paid.
 */
export function createShopApp(config: ShopConfig): Express {
  const app = express();
  app.disable('x-powered-by');

  app.get('/', (_req, res) => {
    res.type('html').send(`<!doctype html><meta charset="utf-8"><title>Shop</title>
<form method="post" action="/checkout">
<p>${escape(config.item.name)}: ¥${config.item.amount.toLocaleString('ja-JP')}</p>
<label>Name you will transfer under, in katakana <input name="payer_name" required></label>
<p>Your bank prints it in half-width katakana (ヤマダ ジロウ becomes ﾔﾏﾀﾞ ｼﾞﾛｳ); the next page shows it as it must appear.</p>
<button>Pay by bank transfer</button>
</form>`);
  });

  // The order's payer_name is the name as the bank will print it: a deposit is confirmed as `exact`
  // only under the very name the order holds, and banks print names in half-width katakana. The
  // purchase id doubles as the idempotency key: a double-clicked button or a retried request
  // registers the order once.
  app.post('/checkout', express.urlencoded({ extended: false }), async (req, res) => {
    const typed = String(req.body?.payer_name ?? '').trim();
    const printed = bankForm(typed);
    if (typed === '' || printed === undefined || printed === '') {
      res.status(400).type('text').send('Give the name you will transfer under in katakana (no bank prints kanji).');
      return;
    }
    const id = `purchase-${randomUUID()}`;
    const order = await config.client.orders.create(
      { amount: config.item.amount, payer_name: printed, external_id: id, item_name: config.item.name },
      { idempotencyKey: id },
    );
    config.shop.add({ id, orderId: order.id, paymentUrl: order.payment_url, transferAs: order.payer_name_bank_form, status: order.status, paidAt: null });
    res.redirect(303, order.payment_url);
  });

  app.get('/purchases/:id', (req, res) => {
    const purchase = config.shop.purchase(req.params.id);
    if (purchase === undefined) res.status(404).json({ error: 'no such purchase' });
    else res.json(purchase);
  });

  // The signature covers the raw bytes, so this route reads them unparsed.
  app.post('/webhooks', express.raw({ type: () => true, limit: '1mb' }), async (req, res) => {
    let event: Event;
    try {
      event = config.verifier.verify(req.body as Buffer, req.headers);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      res.status(400).type('text').send('signature not verified');
      return;
    }
    await handleEvent(config, event);
    res.sendStatus(204);
  });

  // A refused order (say, a payer name too long) is the buyer's to fix; anything else is answered
  // 500, which for a webhook makes the service deliver the event again later: nothing is lost.
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (error instanceof ApiError && error.status === 400) res.status(400).type('text').send(error.message);
    else res.status(500).type('text').send('try again later');
  });
  return app;
}

/**
 * Events may come twice (a retry after a lost answer) and out of order (a retried one after a
 * later one). So a handled event id is skipped, and for an order event the order is read again:
 * the shop acts on how the order is now, never on how an old event says it was
 * (docs/decisions/0049-example-webhook-handling.md).
 */
async function handleEvent(config: ShopConfig, event: Event): Promise<void> {
  if (config.shop.wasHandled(event.id)) {
    config.shop.repeatsIgnored += 1;
    return;
  }
  if (event.type.startsWith('order.') && 'id' in event.data.object) {
    const orderId = event.data.object.id;
    if (config.shop.purchaseOfOrder(orderId) !== undefined) config.shop.applyOrder(await config.client.orders.retrieve(orderId), new Date());
  }
  config.shop.markHandled(event.id);
}
