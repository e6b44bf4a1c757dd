import type { UserRow } from '@pmatch/db';
import type { FailureThrottle, ThrottledTry } from '../data/login-throttle';
import { findUserOfOrganisation } from '../data/users';
import { verifyPassword } from '../domain/passwords';
import { recordAttempt, type AuditContext } from './audit';
import type { ConsoleDeps } from './console-login';
import { proofOf, spendProof } from './second-factor-proof';

/** How a password or code typed again went: `throttled` when the person's tries are spent (nothing was checked). */
export type Reentry = 'confirmed' | 'wrong' | 'throttled' | 'unavailable';

/** An action that needs the password or a code again: how the re-entry failed, or what the action did. */
export type Reentered<T> = { outcome: Exclude<Reentry, 'confirmed'> } | ({ outcome: 'done' } & T);

/**
 * Whether the person typed their own password again (before a secret is shown or reissued, a
 * second factor is set up, or a security setting changes). Every try is taken from the person's
 * and the address's re-entry allowance before the password is checked; a wrong one is audited.
 */
export async function confirmPassword(deps: ConsoleDeps, throttle: FailureThrottle, person: AuditContext, password: string): Promise<Reentry> {
  return reenter(deps, throttle, person, async () => {
    const user = await findUserOfOrganisation(deps.database.prisma, person.organisationId, person.userId);
    return user?.passwordHash != null && (await verifyPassword(password, user.passwordHash));
  });
}

/**
 * Whether the person gave a code of their second factor again (from the app, or a recovery code,
 * which is then spent), before it is turned off or its recovery codes are replaced; throttled and
 * audited as `confirmPassword`.
 */
export async function confirmSecondFactor(deps: ConsoleDeps, throttle: FailureThrottle, person: AuditContext, user: UserRow, code: string): Promise<Reentry> {
  return reenter(deps, throttle, person, async () => {
    const proof = proofOf(deps, user, code);
    return proof !== undefined && (await spendProof(deps.database.prisma, user.id, proof, deps.clock.now()));
  });
}

async function reenter(deps: ConsoleDeps, throttle: FailureThrottle, person: AuditContext, check: () => Promise<boolean>): Promise<Reentry> {
  let attempt: ThrottledTry | undefined;
  try {
    attempt = await throttle.take(`user:${person.userId}`, person.ip);
  } catch {
    return 'unavailable';
  }
  if (attempt === undefined) return 'throttled';
  if (await check()) {
    await attempt.succeeded().catch(() => undefined);
    return 'confirmed';
  }
  await recordAttempt(deps, { ...person, mode: null }, { action: 'reentry_failed', objectId: person.userId, detail: {} });
  return 'wrong';
}
