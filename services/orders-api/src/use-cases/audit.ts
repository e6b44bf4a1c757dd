import { AppError, type Mode } from '@pmatch/contracts';
import type { Tx } from '@pmatch/db';
import { appendAudit } from '../data/audit-log';
import type { OrdersApiDeps } from './deps';

/** Who did something on the console, in which organisation and mode, from where. */
export interface AuditContext {
  organisationId: string;
  mode: Mode | null;
  userId: string;
  email: string;
  ip: string;
}

/** What the audit log says of one action. */
export interface AuditRecord {
  action: string;
  objectId: string | null;
  detail: Record<string, unknown>;
}

type AuditDeps = Pick<OrdersApiDeps, 'database' | 'clock'>;

/**
 * Runs `work` in one database transaction and, when a person acts (`who` given), writes the audit
 * row `record(result)` in that same transaction: the action and its audit row commit together or
 * not at all. The API passes no `who` and writes no audit row.
 */
export async function inAuditedTransaction<T>(
  deps: AuditDeps,
  who: AuditContext | undefined,
  work: (tx: Tx) => Promise<T>,
  record: (result: T) => AuditRecord,
): Promise<T> {
  return deps.database.prisma.$transaction(async (tx) => {
    const result = await work(tx);
    if (who !== undefined) await appendAudit(tx, entryOf(deps, who, record(result)));
    return result;
  });
}

/**
 * Audits an action another service decides (the matcher) and this one only asks for. The request is
 * written to the audit log before it is sent (`outcome: "requested"`), so no decision can exist
 * without its audit row even if this process dies while waiting; the answer is appended as a
 * second row (`done` or `refused` with its code). docs/decisions/0100-console-actions-audited-in-their-transaction.md
 */
export async function auditedRequest<T>(
  deps: AuditDeps,
  who: AuditContext | undefined,
  request: AuditRecord,
  ask: () => Promise<T>,
  outcome: (result: T) => Record<string, unknown> = () => ({}),
): Promise<T> {
  if (who === undefined) return ask();
  await appendAudit(deps.database.prisma, entryOf(deps, who, { ...request, detail: { ...request.detail, outcome: 'requested' } }));
  let result: T;
  try {
    result = await ask();
  } catch (error) {
    const code = error instanceof AppError ? error.code : 'internal_error';
    const unknown = code === 'service_unavailable';
    await appendAudit(deps.database.prisma, entryOf(deps, who, { ...request, detail: { ...request.detail, outcome: unknown ? 'unknown' : 'refused', code } }));
    throw error;
  }
  await appendAudit(deps.database.prisma, entryOf(deps, who, { ...request, detail: { ...request.detail, outcome: 'done', ...outcome(result) } }));
  return result;
}

/** Appends a row for something a person did that changes nothing but is worth recording (a failed log-in). */
export async function recordAttempt(deps: AuditDeps, who: AuditContext, record: AuditRecord): Promise<void> {
  await appendAudit(deps.database.prisma, entryOf(deps, who, record));
}

function entryOf(deps: AuditDeps, who: AuditContext, record: AuditRecord) {
  return {
    organisationId: who.organisationId,
    mode: who.mode,
    userId: who.userId,
    userEmail: who.email,
    action: record.action,
    objectId: record.objectId,
    detail: record.detail,
    ip: who.ip,
    at: deps.clock.now(),
  };
}
