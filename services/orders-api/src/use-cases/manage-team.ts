import { AppError, USER_ROLES, type UserRole } from '@pmatch/contracts';
import { insertUser, passwordSetupUrl, type UserRow } from '@pmatch/db';
import { changeRole, listUsers, removeUser } from '../data/users';
import { inAuditedTransaction, type AuditContext } from './audit';
import type { OrdersApiDeps } from './deps';

export async function getTeam(deps: Pick<OrdersApiDeps, 'database'>, organisationId: string): Promise<UserRow[]> {
  return listUsers(deps.database.prisma, organisationId);
}

const roleOf = (role: string | undefined): UserRole => {
  if (!USER_ROLES.includes(role as UserRole)) throw new AppError('parameter_invalid', 'The role must be admin, operator or viewer.', { param: 'role' });
  return role as UserRole;
};

/** Invites a person: a user without a password, and the one-time link (24 hours) that sets it. */
export async function inviteUser(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'publicBaseUrl'>,
  organisationId: string,
  request: { email: string; role: string | undefined },
  audit?: AuditContext,
): Promise<{ user: UserRow; setupUrl: string }> {
  const email = request.email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) throw new AppError('parameter_invalid', 'Give an e-mail address.', { param: 'email' });
  const role = roleOf(request.role);
  const { row, setupToken } = await inAuditedTransaction(
    deps,
    personal(audit),
    (tx) => insertUser(tx, { organisationId, email, role }, deps.clock.now()),
    ({ row: user }) => ({ action: 'user.invite', objectId: user.id, detail: { email: user.email, role: user.role } }),
  );
  return { user: row, setupUrl: passwordSetupUrl(deps.publicBaseUrl, setupToken) };
}

/** The team belongs to the organisation, not to a mode: its audit rows carry none. */
const personal = (audit: AuditContext | undefined): AuditContext | undefined => (audit === undefined ? undefined : { ...audit, mode: null });

const LAST_ADMIN = () => new AppError('parameter_invalid', 'The last admin of an organisation cannot lose the role or be removed.', { param: 'role' });

export async function changeUserRole(
  deps: Pick<OrdersApiDeps, 'database' | 'clock'>,
  organisationId: string,
  userId: string,
  role: string | undefined,
  audit?: AuditContext,
): Promise<void> {
  const newRole = roleOf(role);
  await inAuditedTransaction(
    deps,
    personal(audit),
    async (tx) => refuseUnlessDone(await changeRole(tx, organisationId, userId, newRole, deps.clock.now()), userId),
    () => ({ action: 'user.change_role', objectId: userId, detail: { role: newRole } }),
  );
}

/** Removes a person; their sessions end with them. */
export async function removeTeamMember(
  deps: Pick<OrdersApiDeps, 'database' | 'clock'>,
  organisationId: string,
  userId: string,
  audit?: AuditContext,
): Promise<void> {
  await inAuditedTransaction(
    deps,
    personal(audit),
    async (tx) => refuseUnlessDone(await removeUser(tx, organisationId, userId), userId),
    () => ({ action: 'user.remove', objectId: userId, detail: {} }),
  );
}

function refuseUnlessDone(outcome: 'changed' | 'removed' | 'missing' | 'last_admin', userId: string): void {
  if (outcome === 'missing') throw new AppError('resource_missing', `No such user: ${userId}.`);
  if (outcome === 'last_admin') throw LAST_ADMIN();
}
