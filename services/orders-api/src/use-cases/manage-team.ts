import { AppError, USER_ROLES, type UserRole } from '@pmatch/contracts';
import { insertUser, newPasswordSetup, passwordSetupUrl, resetUserAccess, type UserRow } from '@pmatch/db';
import { queueConsoleEmail } from '../data/console-emails';
import type { FailureThrottle } from '../data/login-throttle';
import { changeRole, findOrganisation, findUserOfOrganisation, listUsers, removeUser, setPasswordSetup } from '../data/users';
import { accessResetEmail, invitationEmail } from '../domain/console-emails';
import { inAuditedTransaction, type AuditContext } from './audit';
import type { OrdersApiDeps } from './deps';
import { keepToShowOnce, type ShowTo } from './shown-once';

export async function getTeam(deps: Pick<OrdersApiDeps, 'database'>, organisationId: string): Promise<UserRow[]> {
  return listUsers(deps.database.prisma, organisationId);
}

const roleOf = (role: string | undefined): UserRole => {
  if (!USER_ROLES.includes(role as UserRole)) throw new AppError('parameter_invalid', 'The role must be admin, operator or viewer.', { param: 'role' });
  return role as UserRole;
};

/**
 * Invites a person: a user of this organisation without a password, and the one-time link (24
 * hours) that sets it, e-mailed to the address only. The answer is the same whether or not the
 * address is another organisation's account (such an invitation can never be accepted), so
 * inviting reveals nothing of other organisations; an address already of this organisation is
 * refused. docs/decisions/0154-invitations-reveal-nothing-of-other-organisations.md
 */
export async function inviteUser(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'publicBaseUrl'>,
  organisationId: string,
  request: { email: string; role: string | undefined },
  audit?: AuditContext,
): Promise<UserRow> {
  const email = request.email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) throw new AppError('parameter_invalid', 'Give an e-mail address.', { param: 'email' });
  const role = roleOf(request.role);
  const now = deps.clock.now();
  return inAuditedTransaction(
    deps,
    personal(audit),
    async (tx) => {
      const { row, setupToken } = await insertUser(tx, { organisationId, email, role }, now);
      const organisation = await findOrganisation(tx, organisationId);
      const link = { url: passwordSetupUrl(deps.publicBaseUrl, setupToken), expiresAt: row.passwordSetupExpiresAt! };
      await queueConsoleEmail(tx, invitationEmail({ email, organisationName: organisation.name, role }, link), now);
      return row;
    },
    (user) => ({ action: 'user.invite', objectId: user.id, detail: { email: user.email, role: user.role } }),
  );
}

export type AccessReset = { outcome: 'invitation_sent' } | { outcome: 'reset'; displayId: string };

/**
 * Unlocks a person of the organisation (an admin's action; never one's own access). Someone who
 * never set a password gets their invitation again (a new link, e-mailed only). Anyone else loses
 * their sessions, password, second factor and recovery codes, and gets a new one-time set-up link
 * (24 hours), e-mailed to them and kept to be shown once to the admin (`displayId`); their count
 * of wrong log-ins is forgotten.
 */
export async function resetAccess(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'publicBaseUrl' | 'secretBox'>,
  loginThrottle: FailureThrottle,
  userId: string,
  audit: AuditContext,
  showTo: ShowTo,
): Promise<AccessReset> {
  if (userId === audit.userId) throw new AppError('parameter_invalid', 'Your own access is reset on the account page, not here.', { param: 'user' });
  const user = await findUserOfOrganisation(deps.database.prisma, audit.organisationId, userId);
  if (user === null) throw new AppError('resource_missing', `No such user: ${userId}.`);
  const now = deps.clock.now();
  const organisation = await findOrganisation(deps.database.prisma, audit.organisationId);
  if (user.activatedAt === null) {
    const setup = newPasswordSetup(now);
    await inAuditedTransaction(
      deps,
      personal(audit),
      async (tx) => {
        await setPasswordSetup(tx, user.id, setup, now);
        const link = { url: passwordSetupUrl(deps.publicBaseUrl, setup.token), expiresAt: setup.expiresAt };
        await queueConsoleEmail(tx, invitationEmail({ email: user.email, organisationName: organisation.name, role: user.role }, link), now);
      },
      () => ({ action: 'user.invite_again', objectId: user.id, detail: { email: user.email } }),
    );
    return { outcome: 'invitation_sent' };
  }
  const displayId = await inAuditedTransaction(
    deps,
    personal(audit),
    async (tx) => {
      const reset = await resetUserAccess(tx, user.id, now);
      if (reset === null) throw new AppError('resource_missing', `No such user: ${userId}.`);
      const link = { url: passwordSetupUrl(deps.publicBaseUrl, reset.setupToken), expiresAt: reset.row.passwordSetupExpiresAt! };
      await queueConsoleEmail(tx, accessResetEmail({ email: user.email, organisationName: organisation.name }, link), now);
      return keepToShowOnce(deps, tx, showTo, 'setup_link', { userId: user.id, email: user.email, url: link.url, expiresAt: link.expiresAt.toISOString() });
    },
    () => ({ action: 'user.reset_access', objectId: user.id, detail: { email: user.email } }),
  );
  await loginThrottle.forget(user.email).catch(() => undefined);
  return { outcome: 'reset', displayId };
}

/** The team belongs to the organisation, not to a mode: its audit rows carry none. */
const personal = (audit: AuditContext | undefined): AuditContext | undefined => (audit === undefined ? undefined : { ...audit, mode: null });

/** The refusal to demote or remove an organisation's last admin (a `parameter_invalid` on `role`). */
export class LastAdminRefusal extends AppError {
  constructor() {
    super('parameter_invalid', 'The last admin of an organisation cannot lose the role or be removed.', { param: 'role' });
  }
}

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
  if (outcome === 'last_admin') throw new LastAdminRefusal();
}
