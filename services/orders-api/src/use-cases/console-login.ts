import { randomBytes } from 'node:crypto';
import type { Mode } from '@pmatch/contracts';
import type { UserRow } from '@pmatch/db';
import { SecretNotOpened } from '@pmatch/platform';
import type { LoginThrottle } from '../data/login-throttle';
import { deleteOtherSessions, insertSession } from '../data/console-sessions';
import { findOrganisation, findUserByEmail, findUserBySetupToken, setPasswordWithToken, spendTotpStep } from '../data/users';
import { UNKNOWN_USER_HASH, hashPassword, passwordProblem, verifyPassword } from '../domain/passwords';
import { acceptedStep } from '../domain/totp';
import type { OrdersApiDeps } from './deps';
import { recordAudit, type AuditContext } from './audit';

export type ConsoleDeps = Pick<OrdersApiDeps, 'database' | 'clock' | 'secretBox'>;

export const newToken = (): string => randomBytes(32).toString('base64url');

export type LoginOutcome =
  { outcome: 'logged_in'; token: string; secondFactorPending: boolean; user: UserRow } | { outcome: 'failed' | 'throttled' | 'unavailable' };

/**
 * Checks an e-mail and password. An unknown e-mail, a user without a password yet and a wrong
 * password take the same time and get the same answer. Each failure counts against the account
 * and the address (`LoginThrottle`); past the allowance the password is not even checked. A
 * success starts a new session (a new id, whatever the browser had), owing a second factor if the
 * user has one.
 */
export async function logIn(
  deps: ConsoleDeps,
  throttle: LoginThrottle,
  request: { email: string; password: string; ip: string; mode: Mode },
): Promise<LoginOutcome> {
  try {
    if (!(await throttle.mayTry(request.email, request.ip))) return { outcome: 'throttled' };
  } catch {
    return { outcome: 'unavailable' };
  }
  const user = await findUserByEmail(deps.database.prisma, request.email);
  const matches = await verifyPassword(request.password, user?.passwordHash ?? UNKNOWN_USER_HASH);
  const now = deps.clock.now();
  if (user === null || user.passwordHash === null || !matches) {
    await throttle.failed(request.email, request.ip).catch(() => undefined);
    if (user !== null) await recordAudit(deps, auditOf(user, request.ip), 'login_failed', user.id, {});
    return { outcome: 'failed' };
  }
  await throttle.succeeded(request.email, request.ip).catch(() => undefined);
  const token = newToken();
  const secondFactorPending = user.totpEnabledAt !== null;
  await insertSession(deps.database.prisma, { token, userId: user.id, csrfToken: newToken(), mode: request.mode, secondFactorPending, ip: request.ip }, now);
  await recordAudit(deps, auditOf(user, request.ip), 'login', user.id, { second_factor: secondFactorPending });
  return { outcome: 'logged_in', token, secondFactorPending, user };
}

/** Whether the code proves the second factor; a code is good once, and none is for a TOTP secret that does not open for this user. */
export async function proveSecondFactor(deps: ConsoleDeps, user: UserRow, code: string, ip: string): Promise<boolean> {
  if (user.totpSecretEncrypted === null || user.totpEnabledAt === null) return false;
  const secret = openTotpSecret(deps, user.id, user.totpSecretEncrypted);
  const step = secret === undefined ? undefined : acceptedStep(secret, code.trim(), deps.clock.now(), user.totpLastStep);
  const proven = step !== undefined && (await spendTotpStep(deps.database.prisma, user.id, step));
  await recordAudit(deps, auditOf(user, ip), proven ? 'second_factor' : 'second_factor_failed', user.id, {});
  return proven;
}

/** The user a setup link is for, while it works. */
export async function findSetupUser(deps: ConsoleDeps, token: string): Promise<UserRow | null> {
  return /^[0-9A-Za-z]{20,80}$/.test(token) ? findUserBySetupToken(deps.database.prisma, token, deps.clock.now()) : null;
}

export type SetupOutcome = 'done' | 'invalid' | 'too_short' | 'too_long' | 'mismatch';

/** Sets a password through a one-time link; every session the user had ends. */
export async function setPassword(deps: ConsoleDeps, token: string, password: string, again: string, ip: string): Promise<SetupOutcome> {
  const user = await findSetupUser(deps, token);
  if (user === null) return 'invalid';
  const problem = passwordProblem(password);
  if (problem !== undefined) return problem;
  if (password !== again) return 'mismatch';
  if (!(await setPasswordWithToken(deps.database.prisma, token, await hashPassword(password), deps.clock.now()))) return 'invalid';
  await deleteOtherSessions(deps.database.prisma, user.id, '');
  await recordAudit(deps, auditOf(user, ip), 'password_set', user.id, {});
  return 'done';
}

/** Whether the user must set up a second factor before anything else: an admin of an organisation that requires it. */
export async function owesSecondFactorSetup(deps: ConsoleDeps, user: UserRow): Promise<boolean> {
  if (user.role !== 'admin' || user.totpEnabledAt !== null) return false;
  return (await findOrganisation(deps.database.prisma, user.organisationId)).requireAdminTotp;
}

function auditOf(user: UserRow, ip: string): AuditContext {
  return { organisationId: user.organisationId, mode: null, userId: user.id, email: user.email, ip };
}

function openTotpSecret(deps: ConsoleDeps, userId: string, sealed: string): string | undefined {
  try {
    return deps.secretBox.open(sealed, { kind: 'user_totp', id: userId });
  } catch (error) {
    if (error instanceof SecretNotOpened) return undefined;
    throw error;
  }
}
