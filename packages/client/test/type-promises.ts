import type { ErrorCodeOf, EventOf, PaymentsClient } from '../src';

/** What the client's types promise: checked by `tsc -p tsconfig.test.json`, never run. */
export async function typesPromise(client: PaymentsClient): Promise<void> {
  // @ts-expect-error cancel never answers external_id_conflict
  const foreign: ErrorCodeOf<'cancelOrder'> = 'external_id_conflict';
  for await (const event of client.events.listAll({ type: 'order.paid' })) {
    const narrowed: EventOf<'order.paid'> = event;
    const type: 'order.paid' = event.type;
    void [narrowed, type, foreign];
  }
  // @ts-expect-error webhook.test events are never listed, so they are no filter
  await client.events.list({ type: 'webhook.test' });
  const secret: string = (await client.webhookEndpoints.create({ url: 'https://shop.example/hooks' })).secret;
  const status: number = (await client.orders.retrieve('ord_AAAAAAAAAAAAAAAAAAAAAAAA')).lastResponse.statusCode;
  void [secret, status];
}
