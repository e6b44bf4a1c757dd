import { randomBytes } from 'node:crypto';
import type { Mode } from '@pmatch/contracts';
import type { UserRow } from '@pmatch/db';
import { SecretNotOpened } from '@pmatch/platform';
import type { LoginThrottle } from '../data/login-throttle';

export type { LoginThrottle };
import { deleteOtherSessions, deleteSession, insertSession } from '../data/console-sessions';
import { findOrganisation, findUserByEmail, findUserBySetupToken, setPasswordWithToken, spendTotpStep } from '../data/users';
import { UNKNOWN_USER_HASH, hashPassword, passwordProblem, verifyPassword } from '../domain/passwords';
import { acceptedStep } from '../domain/totp';
import type { OrdersApiDeps } from './deps';
import { inAuditedTransaction, recordAttempt, type AuditContext } from './audit';

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
  request: { email: string; password: string; ip: string; mode: Mode; previousToken?: string },
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
    if (user !== null) await recordAttempt(deps, auditOf(user, request.ip), { action: 'login_failed', objectId: user.id, detail: {} });
    return { outcome: 'failed' };
  }
  await throttle.succeeded(request.email, request.ip).catch(() => undefined);
  const token = newToken();
  const secondFactorPending = user.totpEnabledAt !== null;
  await inAuditedTransaction(
    deps,
    auditOf(user, request.ip),
    async (tx) => {
      // The session the browser brought, if any, ends: a log-in always gets a new id.
      if (request.previousToken !== undefined) await deleteSession(tx, request.previousToken);
      await insertSession(tx, { token, userId: user.id, csrfToken: newToken(), mode: request.mode, secondFactorPending, ip: request.ip }, now);
    },
    () => ({ action: 'login', objectId: user.id, detail: { second_factor: secondFactorPending } }),
  );
  return { outcome: 'logged_in', token, secondFactorPending, user };
}

/**
 * Whether the code proves the second factor of the session waiting for it; a code is good once, and
 * none is for a TOTP secret that does not open for this user. Proven, the waiting session is
 * replaced by a full one with a new id (as at any change of privilege): its token is the answer.
 */
export async function proveSecondFactor(
  deps: ConsoleDeps,
  session: { token: string; user: UserRow; mode: Mode },
  code: string,
  ip: string,
): Promise<{ proven: true; token: string } | { proven: false }> {
  const { user } = session;
  if (user.totpSecretEncrypted === null || user.totpEnabledAt === null) return { proven: false };
  const secret = openTotpSecret(deps, user.id, user.totpSecretEncrypted);
  const step = secret === undefined ? undefined : acceptedStep(secret, code.trim(), deps.clock.now(), user.totpLastStep);
  const token = newToken();
  const proven =
    step !== undefined &&
    (await inAuditedTransaction(
      deps,
      auditOf(user, ip),
      async (tx) => {
        if (!(await spendTotpStep(tx, user.id, step))) return false;
        await deleteSession(tx, session.token);
        await insertSession(tx, { token, userId: user.id, csrfToken: newToken(), mode: session.mode, secondFactorPending: false, ip }, deps.clock.now());
        return true;
      },
      (spent) => ({ action: spent ? 'second_factor' : 'second_factor_failed', objectId: user.id, detail: {} }),
    ));
  if (!proven) {
    if (step === undefined) await recordAttempt(deps, auditOf(user, ip), { action: 'second_factor_failed', objectId: user.id, detail: {} });
    return { proven: false };
  }
  return { proven: true, token };
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
  const passwordHash = await hashPassword(password);
  return inAuditedTransaction(
    deps,
    auditOf(user, ip),
    async (tx) => {
      if (!(await setPasswordWithToken(tx, token, passwordHash, deps.clock.now()))) return refuseSetup();
      await deleteOtherSessions(tx, user.id, '');
      return 'done' as const;
    },
    () => ({ action: 'password_set', objectId: user.id, detail: {} }),
  ).catch((error: unknown) => {
    if (error instanceof SetupRefused) return 'invalid' as const;
    throw error;
  });
}

/** Whether the user must set up a second factor before anything else: an admin of an organisation that requires it. */
export async function owesSecondFactorSetup(deps: ConsoleDeps, user: UserRow): Promise<boolean> {
  if (user.role !== 'admin' || user.totpEnabledAt !== null) return false;
  return (await findOrganisation(deps.database.prisma, user.organisationId)).requireAdminTotp;
}

/** A setup link spent meanwhile: the transaction is rolled back and nothing is audited. */
class SetupRefused extends Error {}
function refuseSetup(): never {
  throw new SetupRefused('setup link spent');
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
