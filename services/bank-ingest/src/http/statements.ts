import { tmpdir } from 'node:os';
import { AppError } from '@pmatch/contracts';
import type { Database } from '@pmatch/db';
import type { Clock, OutboxPublisher } from '@pmatch/platform';
import { Router } from 'express';
import { StreamingSignatureCheck, type Adapter } from '../domain/adapter-auth';
import { STATEMENT_FORMATS, type StatementAccount, type StatementFormat } from '../domain/statements/statement';
import type { AdapterCache } from '../data/adapters';
import { importStatement } from '../use-cases/import-statement';
import type { IngestMetrics } from '../use-cases/metrics';
import { accountFor, namedAdapter, namedAdapterOf, signatureHeaders } from './adapter-auth';
import { spoolBody } from './statement-upload';

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
}

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
    const file = await spoolBody(req, deps.spoolDirectory ?? tmpdir(), deps.statementMaxBytes, (chunk) => check.update(chunk));
    let imported;
    // The upload is removed before the answer: once a client has it, nothing of the file is left on disk.
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
    res.status(200).json(imported);
  });
  return router;
}

function formatOf(value: unknown): StatementFormat | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && (STATEMENT_FORMATS as readonly string[]).includes(value)) return value as StatementFormat;
  throw new AppError('parameter_invalid', `format must be one of ${STATEMENT_FORMATS.join(', ')} (or left out to detect it).`, { param: 'format' });
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
