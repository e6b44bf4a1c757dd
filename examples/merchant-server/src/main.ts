import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { PaymentsClient, WebhookVerifier } from '@pmatch/client';
import { createShopApp } from './app';
import { Shop } from './shop';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`Set ${name} (see README.md).`);
  return value;
}

const app = createShopApp({
  client: new PaymentsClient({ apiKey: required('PAYMENTS_API_KEY'), baseUrl: required('PAYMENTS_API_URL') }),
  verifier: new WebhookVerifier(required('WEBHOOK_SECRET').split(',')),
  shop: new Shop(),
  item: { name: process.env.ITEM_NAME ?? 'お米 5kg', amount: Number(process.env.ITEM_AMOUNT ?? 5000) },
});

const port = Number(process.env.PORT ?? 4000);
const tls = process.env.TLS_CERT_FILE ? { cert: readFileSync(process.env.TLS_CERT_FILE), key: readFileSync(required('TLS_KEY_FILE')) } : undefined;
const server = tls ? createHttpsServer(tls, app) : createHttpServer(app);
server.listen(port, () => console.log(`shop listening on ${tls ? 'https' : 'http'}://localhost:${port}`));
