import type { Mode } from '@pmatch/contracts';
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

/** Appends what a person did to the organisation's audit log. */
export async function recordAudit(
  deps: Pick<OrdersApiDeps, 'database' | 'clock'>,
  who: AuditContext,
  action: string,
  objectId: string | null,
  detail: Record<string, unknown>,
): Promise<void> {
  await appendAudit(deps.database.prisma, {
    organisationId: who.organisationId,
    mode: who.mode,
    userId: who.userId,
    userEmail: who.email,
    action,
    objectId,
    detail,
    ip: who.ip,
    at: deps.clock.now(),
  });
}
