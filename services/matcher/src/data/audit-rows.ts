import type { CommandAudit } from '@pmatch/contracts';
import { asSql, sql, preparedQuery, type SqlOrPrisma } from '@pmatch/db';

interface AuditValues {
  organisationId: string;
  mode: string;
  userId: string;
  userEmail: string;
  action: string;
  objectId: string | null;
  detail: string;
  ip: string | null;
  createdAt: Date;
}

const appendAuditQuery = preparedQuery<AuditValues>(
  'matcher.append_audit_row',
  (p) => sql`INSERT INTO audit_log (organisation_id, mode, user_id, user_email, action, object_id, detail, ip, created_at)
    VALUES (${p.organisationId}, ${p.mode}, ${p.userId}, ${p.userEmail}, ${p.action}, ${p.objectId}, ${p.detail}::jsonb, ${p.ip}, ${p.createdAt})`,
);

/** Appends, in the caller's transaction, the audit row of a decision a person asked for, with what came of it. */
export async function appendDecisionAudit(
  tx: SqlOrPrisma,
  scope: { organisation_id: string; mode: string },
  audit: CommandAudit,
  objectId: string | null,
  outcome: Record<string, unknown>,
  at: Date,
): Promise<void> {
  await asSql(tx).count(appendAuditQuery, {
    organisationId: scope.organisation_id,
    mode: scope.mode,
    userId: audit.user_id,
    userEmail: audit.user_email,
    action: audit.action,
    objectId,
    detail: JSON.stringify({ ...audit.detail, outcome: 'done', ...outcome }),
    ip: audit.ip,
    createdAt: at,
  });
}
