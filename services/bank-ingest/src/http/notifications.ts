import { BankNotification, withoutControlCharacters } from '@pmatch/contracts';
import { jsonBodies, parseInput, type Clock, type OutboxPublisher } from '@pmatch/platform';
import type { Database } from '@pmatch/db';
import { Router } from 'express';
import type { AdapterCache } from '../data/adapters';
import { TransactionStore } from '../data/transactions';
import type { IngestMetrics } from '../use-cases/metrics';
import { accountFor, namedAdapter, namedAdapterOf, verifySignature } from './adapter-auth';

export interface NotificationDeps {
  database: Database;
  clock: Clock;
  adapters: AdapterCache;
  outbox: OutboxPublisher;
  metrics?: IngestMetrics;
}

export function notificationsRouter(deps: NotificationDeps): Router {
  const router = Router();
  const transactions = new TransactionStore(deps.database, deps.outbox);
  // A request naming no active adapter, or unsigned, is refused before its body is read.
  router.post('/ingest/v1/notifications', namedAdapter(deps.adapters), ...jsonBodies(), async (req, res) => {
    const adapter = namedAdapterOf(res);
    verifySignature(req, adapter);
    const notification = parseInput(BankNotification, req.body);
    const account = await accountFor(
      deps.database.prisma,
      adapter,
      notification.account === undefined ? { bankAccountId: notification.bank_account_id! } : { identity: notification.account },
      notification.account === undefined ? 'bank_account_id' : 'account',
    );
    const stored = await transactions.store(
      {
        organisationId: account.organisationId,
        mode: 'live',
        bankAccountId: account.id,
        bankReference: notification.bank_reference,
        direction: notification.direction,
        amount: notification.amount,
        counterparty: withoutControlCharacters(notification.counterparty),
        occurredAt: new Date(notification.occurred_at),
        adapterId: adapter.id,
        ...(notification.remitter_code === undefined ? {} : { remitterCode: notification.remitter_code }),
      },
      deps.clock.now(),
    );
    if (!stored.duplicate && notification.direction === 'deposit') deps.metrics?.depositsIngested('notification');
    res.status(stored.duplicate ? 200 : 202).json({ transaction_id: stored.transaction.id, duplicate: stored.duplicate });
  });
  return router;
}
