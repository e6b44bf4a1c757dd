import { AppError, type CommandAudit, type Mode } from '@pmatch/contracts';
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
 * Asks the matcher for a decision a person made (`who` given): the audit row travels in the command
 * (`audit`) and the matcher writes it in the decision's own transaction, so the decision and its row
 * commit together or not at all. A refusal is recorded here (`refused` with its code), as is a
 * request left without an answer in time (`unknown`: the object's own history says whether the
 * matcher decided). The API passes no `who` and no audit.
 * docs/decisions/0100-console-actions-audited-in-their-transaction.md
 */
export async function auditedDecision<T>(
  deps: AuditDeps,
  who: AuditContext | undefined,
  request: AuditRecord,
  ask: (audit: CommandAudit | undefined) => Promise<T>,
): Promise<T> {
  if (who === undefined) return ask(undefined);
  try {
    return await ask({ user_id: who.userId, user_email: who.email, ip: who.ip, action: request.action, detail: request.detail });
  } catch (error) {
    const code = error instanceof AppError ? error.code : 'internal_error';
    const outcome = code === 'service_unavailable' ? 'unknown' : 'refused';
    await appendAudit(deps.database.prisma, entryOf(deps, who, { ...request, detail: { ...request.detail, outcome, code } }));
    throw error;
  }
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
