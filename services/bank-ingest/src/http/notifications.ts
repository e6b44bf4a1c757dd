import { AppError, BankNotification } from '@pmatch/contracts';
import { parseInput, type Clock, type OutboxPublisher } from '@pmatch/platform';
import type { Database } from '@pmatch/db';
import { Router, type Request } from 'express';
import { findSigningAdapter } from '../domain/adapter-auth';
import type { AdapterSecretCache } from '../data/adapter-secrets';
import { BankAccountCache, TransactionStore } from '../data/transactions';

export interface NotificationDeps {
  database: Database;
  clock: Clock;
  adapterSecrets: AdapterSecretCache;
  outbox: OutboxPublisher;
}

const SIGNATURE_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

export function notificationsRouter(deps: NotificationDeps): Router {
  const router = Router();
  const accounts = new BankAccountCache(deps.database.prisma);
  const transactions = new TransactionStore(deps.database, deps.outbox);
  router.post('/ingest/v1/notifications', async (req, res) => {
    await authenticateAdapter(req, deps);
    const notification = parseInput(BankNotification, req.body);
    const account = await accounts.find(notification.bank_account_id);
    if (account === null || account.mode !== 'live') {
      // Test accounts never receive bank notifications: their deposits come only from the API.
      throw new AppError('parameter_invalid', 'No such live bank account.', { param: 'bank_account_id' });
    }
    const stored = await transactions.store(
      {
        organisationId: account.organisationId,
        mode: 'live',
        bankAccountId: account.id,
        bankReference: notification.bank_reference,
        direction: notification.direction,
        amount: notification.amount,
        counterparty: notification.counterparty,
        occurredAt: new Date(notification.occurred_at),
      },
      deps.clock.now(),
    );
    res.status(stored.duplicate ? 200 : 202).json({ transaction_id: stored.transaction.id, duplicate: stored.duplicate });
  });
  return router;
}

async function authenticateAdapter(req: Request, deps: NotificationDeps): Promise<void> {
  const headers: Record<string, string> = {};
  for (const name of SIGNATURE_HEADERS) {
    const value = req.get(name);
    if (value === undefined) throw new AppError('invalid_api_key', `Missing ${name} header; notifications must be signed.`);
    headers[name] = value;
  }
  const signed = { rawBody: req.rawBody?.toString('utf8') ?? '', headers };
  // A miss may re-read the adapters (at most once per interval), so a freshly created adapter works without waiting out the cache.
  let adapterId = findSigningAdapter(await deps.adapterSecrets.current(), signed);
  if (adapterId === undefined) {
    const reread = await deps.adapterSecrets.afterMiss();
    if (reread !== undefined) adapterId = findSigningAdapter(reread, signed);
  }
  if (adapterId === undefined) throw new AppError('invalid_api_key', 'The notification signature is not valid.');
}
