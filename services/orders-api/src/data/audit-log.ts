import type { Mode } from '@pmatch/contracts';
import type { AuditLogRow, Db, Prisma } from '@pmatch/db';

export interface AuditEntry {
  organisationId: string;
  mode: Mode | null;
  userId: string | null;
  userEmail: string;
  action: string;
  objectId: string | null;
  detail: Record<string, unknown>;
  ip: string | null;
  at: Date;
}

export async function appendAudit(db: Db, entry: AuditEntry): Promise<void> {
  await db.auditLog.create({
    data: {
      organisationId: entry.organisationId,
      mode: entry.mode,
      userId: entry.userId,
      userEmail: entry.userEmail,
      action: entry.action,
      objectId: entry.objectId,
      detail: entry.detail as Prisma.InputJsonObject,
      ip: entry.ip,
      createdAt: entry.at,
    },
  });
}

/** The organisation's audit log, newest first, before the entry `beforeId` when given. */
export async function listAudit(
  db: Db,
  organisationId: string,
  page: { limit: number; beforeId?: bigint },
): Promise<{ rows: AuditLogRow[]; hasMore: boolean }> {
  const rows = await db.auditLog.findMany({
    where: { organisationId, ...(page.beforeId === undefined ? {} : { id: { lt: page.beforeId } }) },
    orderBy: { id: 'desc' },
    take: page.limit + 1,
  });
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/** Whether anyone of the organisation has ever saved its matching rules (in either mode). */
export async function matchingRulesReviewed(db: Db, organisationId: string): Promise<boolean> {
  const row = await db.auditLog.findFirst({ where: { organisationId, action: 'settings.matching_rules' }, select: { id: true } });
  return row !== null;
}
