import { randomBytes } from 'node:crypto';
import type { Mode } from '@pmatch/contracts';
import { isUniqueViolation, newPasswordSetup, passwordSetupUrl, type UserRow } from '@pmatch/db';
import type { ConsoleThrottles, FailureThrottle, ThrottledTry } from '../data/login-throttle';
import { deleteOtherSessions, deleteSession, insertSession, reserveSecondFactorTry } from '../data/console-sessions';
import { queueConsoleEmail } from '../data/console-emails';
import { findActiveUserByEmail, findOrganisation, findUserBySetupToken, setPasswordSetup, setPasswordWithToken } from '../data/users';
import { passwordResetEmail } from '../domain/console-emails';
import { UNKNOWN_USER_HASH, hashPassword, passwordProblem, verifyPassword } from '../domain/passwords';
import type { OrdersApiDeps } from './deps';
import { inAuditedTransaction, recordAttempt, type AuditContext } from './audit';
import { proofOf, spendProof } from './second-factor-proof';

export type ConsoleDeps = Pick<OrdersApiDeps, 'database' | 'clock' | 'secretBox'>;
/** What the console's routes work with: the service's use cases, and the throttles of its secrets. */
export type ConsoleAppDeps = OrdersApiDeps & { throttles: ConsoleThrottles };

export const newToken = (): string => randomBytes(32).toString('base64url');

/** Wrong codes one log-in may give for its second factor; the log-in ends with the last. */
export const SECOND_FACTOR_TRIES = 5;
/** A password-reset link asked for on the log-in page works this long, once. */
export const PASSWORD_RESET_LIFETIME_MS = 60 * 60 * 1000;

export type LoginOutcome =
  { outcome: 'logged_in'; token: string; secondFactorPending: boolean; user: UserRow } | { outcome: 'failed' | 'throttled' | 'unavailable' };

/**
 * Checks an e-mail and password. An unknown e-mail, a user without a password yet and a wrong
 * password take the same time and get the same answer. Every try is taken from the account's and
 * the address's allowance before the password is checked (`FailureThrottle`); past it the password
 * is not even checked. A success starts a new session (a new id, whatever the browser had). A
 * person with a second factor owes its code: their try is given back only once the code is proven,
 * so a known password never restarts the count of wrong codes.
 */
export async function logIn(
  deps: ConsoleDeps,
  throttle: FailureThrottle,
  request: { email: string; password: string; ip: string; mode: Mode; previousToken?: string },
): Promise<LoginOutcome> {
  let attempt: ThrottledTry | undefined;
  try {
    attempt = await throttle.take(request.email, request.ip);
  } catch {
    return { outcome: 'unavailable' };
  }
  if (attempt === undefined) return { outcome: 'throttled' };
  const user = await findActiveUserByEmail(deps.database.prisma, request.email);
  const matches = await verifyPassword(request.password, user?.passwordHash ?? UNKNOWN_USER_HASH);
  const now = deps.clock.now();
  if (user === null || user.passwordHash === null || !matches) {
    if (user !== null) await recordAttempt(deps, auditOf(user, request.ip), { action: 'login_failed', objectId: user.id, detail: {} });
    return { outcome: 'failed' };
  }
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
  if (!secondFactorPending) await attempt.succeeded().catch(() => undefined);
  return { outcome: 'logged_in', token, secondFactorPending, user };
}

export type SecondFactorOutcome =
  { outcome: 'proven'; token: string } | { outcome: 'wrong'; triesLeft: number } | { outcome: 'ended' | 'throttled' | 'unavailable' };

/**
 * Whether the code (from the authenticator app, or a recovery code) proves the second factor of
 * the log-in waiting for it. Each try is taken before the code is checked, from the log-in's own
 * `SECOND_FACTOR_TRIES` and from the account's log-in allowance, which wrong passwords share: the
 * last wrong code, or a spent allowance, ends the log-in (its session is deleted). A code is good
 * once. Proven, the waiting session is replaced by a full one with a new id: its token is the answer.
 */
export async function proveSecondFactor(
  deps: ConsoleDeps,
  throttle: FailureThrottle,
  session: { token: string; user: UserRow; mode: Mode },
  code: string,
  ip: string,
): Promise<SecondFactorOutcome> {
  const { user } = session;
  const failures = await reserveSecondFactorTry(deps.database.prisma, session.token, SECOND_FACTOR_TRIES);
  if (failures === null) {
    await deleteSession(deps.database.prisma, session.token);
    return { outcome: 'ended' };
  }
  let attempt: ThrottledTry | undefined;
  try {
    attempt = await throttle.take(user.email, ip);
  } catch {
    return { outcome: 'unavailable' };
  }
  if (attempt === undefined) {
    await deleteSession(deps.database.prisma, session.token);
    return { outcome: 'throttled' };
  }
  const proof = proofOf(deps, user, code);
  const token = newToken();
  const now = deps.clock.now();
  const proven =
    proof !== undefined &&
    (await inAuditedTransaction(
      deps,
      auditOf(user, ip),
      async (tx) => {
        if (!(await spendProof(tx, user.id, proof, now))) return false;
        await deleteSession(tx, session.token);
        await insertSession(tx, { token, userId: user.id, csrfToken: newToken(), mode: session.mode, secondFactorPending: false, ip }, now);
        return true;
      },
      (spent) => ({ action: spent ? 'second_factor' : 'second_factor_failed', objectId: user.id, detail: { with: proof.kind } }),
    ));
  if (proven) {
    await attempt.succeeded().catch(() => undefined);
    return { outcome: 'proven', token };
  }
  if (proof === undefined) await recordAttempt(deps, auditOf(user, ip), { action: 'second_factor_failed', objectId: user.id, detail: {} });
  if (failures >= SECOND_FACTOR_TRIES) {
    await deleteSession(deps.database.prisma, session.token);
    return { outcome: 'ended' };
  }
  return { outcome: 'wrong', triesLeft: SECOND_FACTOR_TRIES - failures };
}

/** The user a set-up link is for, while it works. */
export async function findSetupUser(deps: ConsoleDeps, token: string): Promise<UserRow | null> {
  return isSetupToken(token) ? findUserBySetupToken(deps.database.prisma, token, deps.clock.now()) : null;
}

/** Whether the text can be a set-up token at all (nothing else is looked up). */
export const isSetupToken = (token: string): boolean => /^[0-9A-Za-z]{20,80}$/.test(token);

export type SetupOutcome = 'done' | 'invalid' | 'too_short' | 'too_long' | 'mismatch' | 'address_taken';

/**
 * Sets a password through a one-time link; every session the user had ends, and so does the count
 * of wrong log-ins of their address. 'address_taken' when the address is already another
 * organisation's active account (only the link's holder, who got it at that address, learns it).
 */
export async function setPassword(
  deps: ConsoleDeps,
  throttle: FailureThrottle,
  token: string,
  password: string,
  again: string,
  ip: string,
): Promise<SetupOutcome> {
  const user = await findSetupUser(deps, token);
  if (user === null) return 'invalid';
  const problem = passwordProblem(password);
  if (problem !== undefined) return problem;
  if (password !== again) return 'mismatch';
  const passwordHash = await hashPassword(password);
  const outcome = await inAuditedTransaction(
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
    if (isUniqueViolation(error)) return 'address_taken' as const;
    throw error;
  });
  if (outcome === 'done') await throttle.forget(user.email).catch(() => undefined);
  return outcome;
}

export type ResetRequestOutcome = 'sent' | 'throttled' | 'unavailable';

/**
 * A person who forgot their password asks for a link (1 hour, once) at their address. The answer
 * is `sent` whether or not the address has an account, and comes before the e-mail is queued
 * (`queued`), so neither its words nor its time tell; asking is limited per address asked about
 * and per client address. The link replaces any earlier one; a second factor stays as it was.
 */
export async function requestPasswordReset(
  deps: ConsoleDeps & Pick<OrdersApiDeps, 'publicBaseUrl'>,
  throttle: FailureThrottle,
  request: { email: string; ip: string },
): Promise<{ outcome: ResetRequestOutcome; queued: Promise<void> }> {
  const nothing = Promise.resolve();
  try {
    if ((await throttle.take(request.email, request.ip)) === undefined) return { outcome: 'throttled', queued: nothing };
  } catch {
    return { outcome: 'unavailable', queued: nothing };
  }
  const queued = (async () => {
    const user = await findActiveUserByEmail(deps.database.prisma, request.email);
    if (user === null) return;
    const now = deps.clock.now();
    const setup = newPasswordSetup(now, PASSWORD_RESET_LIFETIME_MS);
    await inAuditedTransaction(
      deps,
      auditOf(user, request.ip),
      async (tx) => {
        await setPasswordSetup(tx, user.id, setup, now);
        await queueConsoleEmail(tx, passwordResetEmail(user, { url: passwordSetupUrl(deps.publicBaseUrl, setup.token), expiresAt: setup.expiresAt }), now);
      },
      () => ({ action: 'password_reset_requested', objectId: user.id, detail: {} }),
    );
  })();
  return { outcome: 'sent', queued };
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

export function auditOf(user: UserRow, ip: string): AuditContext {
  return { organisationId: user.organisationId, mode: null, userId: user.id, email: user.email, ip };
}
