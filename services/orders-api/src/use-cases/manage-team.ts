import { AppError, USER_ROLES, type UserRole } from '@pmatch/contracts';
import { insertUser, passwordSetupUrl, type UserRow } from '@pmatch/db';
import { changeRole, listUsers, removeUser } from '../data/users';
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
): Promise<{ user: UserRow; setupUrl: string }> {
  const email = request.email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) throw new AppError('parameter_invalid', 'Give an e-mail address.', { param: 'email' });
  const { row, setupToken } = await insertUser(deps.database.prisma, { organisationId, email, role: roleOf(request.role) }, deps.clock.now());
  return { user: row, setupUrl: passwordSetupUrl(deps.publicBaseUrl, setupToken) };
}

const LAST_ADMIN = () => new AppError('parameter_invalid', 'The last admin of an organisation cannot lose the role or be removed.', { param: 'role' });

export async function changeUserRole(
  deps: Pick<OrdersApiDeps, 'database' | 'clock'>,
  organisationId: string,
  userId: string,
  role: string | undefined,
): Promise<void> {
  const outcome = await changeRole(deps.database.prisma, organisationId, userId, roleOf(role), deps.clock.now());
  if (outcome === 'missing') throw new AppError('resource_missing', `No such user: ${userId}.`);
  if (outcome === 'last_admin') throw LAST_ADMIN();
}

/** Removes a person; their sessions end with them. */
export async function removeTeamMember(deps: Pick<OrdersApiDeps, 'database'>, organisationId: string, userId: string): Promise<void> {
  const outcome = await removeUser(deps.database.prisma, organisationId, userId);
  if (outcome === 'missing') throw new AppError('resource_missing', `No such user: ${userId}.`);
  if (outcome === 'last_admin') throw LAST_ADMIN();
}
