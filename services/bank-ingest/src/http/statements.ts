import { tmpdir } from 'node:os';
import { AppError } from '@pmatch/contracts';
import type { Database } from '@pmatch/db';
import type { Clock, OutboxPublisher, RateLimiter } from '@pmatch/platform';
import { Router, type Response } from 'express';
import { StreamingSignatureCheck, type Adapter } from '../domain/adapter-auth';
import { STATEMENT_FORMATS, type StatementAccount, type StatementFormat } from '../domain/statements/statement';
import type { AdapterCache } from '../data/adapters';
import { importStatement } from '../use-cases/import-statement';
import type { IngestMetrics } from '../use-cases/metrics';
import { accountFor, namedAdapter, namedAdapterOf, signatureHeaders } from './adapter-auth';
import { spoolBody, type SpoolSlots } from './statement-upload';

export interface StatementDeps {
  database: Database;
  clock: Clock;
  adapters: AdapterCache;
  outbox: OutboxPublisher;
  metrics?: IngestMetrics;
  /** Largest statement file taken (STATEMENT_MAX_BYTES). */
  statementMaxBytes: number;
  /** Where uploads are kept while they are imported (STATEMENT_SPOOL_DIR). */
  spoolDirectory?: string;
  /** Uploads spooled and imported at once (STATEMENT_SPOOL_MAX). */
  spoolSlots: SpoolSlots;
  /** Uploads per adapter id, taken before the body is read (STATEMENT_LIMIT_*); none in tests that do not need it. */
  uploadLimiter?: RateLimiter;
}

/** How long a client refused for want of a spool slot is asked to wait. */
const SPOOL_FULL_RETRY_AFTER_S = 5;

/**
 * POST /ingest/v1/statements: a bank statement file from the adapter its `bank-adapter-id` header
 * names (else 401 before a byte of it is read), signed with that adapter's secret as Standard
 * Webhooks over its raw bytes, streamed to disk (never whole in memory), then checked whole and stored.
 */
export function statementsRouter(deps: StatementDeps): Router {
  const router = Router();
  router.post('/ingest/v1/statements', namedAdapter(deps.adapters), async (req, res) => {
    const format = formatOf(req.query.format);
    const adapter = namedAdapterOf(res);
    const check = new StreamingSignatureCheck(signatureHeaders(req), adapter, Date.now());
    if (!check.fresh) throw new AppError('invalid_api_key', 'The signature is not valid.');
    await withinAdapterLimit(deps, adapter.id, res);
    const release = deps.spoolSlots.tryTake();
    if (release === undefined) {
      res.setHeader('Retry-After', String(SPOOL_FULL_RETRY_AFTER_S));
      res.setHeader('Connection', 'close');
      throw new AppError('service_unavailable', 'Too many statement files are being imported; send it again after the time in Retry-After.');
    }
    let imported;
    // The upload is removed before the answer: once a client has it, nothing of the file is left on disk.
    try {
      const file = await spoolBody(req, deps.spoolDirectory ?? tmpdir(), deps.statementMaxBytes, (chunk) => check.update(chunk));
      try {
        if (!check.verified()) throw new AppError('invalid_api_key', 'The signature is not valid.');
        imported = await importStatement(
          { database: deps.database, outbox: deps.outbox, onDepositsStored: (count) => deps.metrics?.depositsIngested('statement', count) },
          {
            read: () => file.read(),
            ...(format === undefined ? {} : { format }),
            accountOf: (account, line) => allowedAccount(deps, adapter, account, line),
            adapterId: adapter.id,
            receivedAt: deps.clock.now(),
          },
        );
      } finally {
        await file.remove();
      }
    } finally {
      release();
    }
    res.status(200).json(imported);
  });
  return router;
}

function formatOf(value: unknown): StatementFormat | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && (STATEMENT_FORMATS as readonly string[]).includes(value)) return value as StatementFormat;
  throw new AppError('parameter_invalid', `format must be one of ${STATEMENT_FORMATS.join(', ')} (or left out to detect it).`, { param: 'format' });
}

/** 429 once the adapter id has sent more uploads than STATEMENT_LIMIT_* allow, before its body is read. */
async function withinAdapterLimit(deps: StatementDeps, adapterId: string, res: Response): Promise<void> {
  if (deps.uploadLimiter === undefined) return;
  const decision = await deps.uploadLimiter.take(`adapter:statements:${adapterId}`);
  if (decision.allowed) return;
  res.setHeader('Retry-After', String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000))));
  res.setHeader('Connection', 'close');
  throw new AppError('rate_limited', 'This adapter sent too many statement files; send the next after the time in Retry-After.');
}

async function allowedAccount(deps: StatementDeps, adapter: Adapter, account: StatementAccount, line: number) {
  const identity = { bank_code: account.bankCode, branch_code: account.branchCode, account_type: account.accountType, account_number: account.accountNumber };
  try {
    return await accountFor(deps.database.prisma, adapter, { identity }, 'account');
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'account_not_allowed') throw error;
    const named = `${account.bankCode}-${account.branchCode} ${account.accountType} ${account.accountNumber}`;
    throw new AppError('account_not_allowed', `Record ${line} names account ${named}, which this adapter is not bound to; nothing was stored.`, {
      location: { line, field: 'account' },
    });
  }
}
