import type { Db, UserRow } from '@pmatch/db';
import { SecretNotOpened } from '@pmatch/platform';
import { spendRecoveryCode } from '../data/recovery-codes';
import { spendTotpStep } from '../data/users';
import { normalRecoveryCode, recoveryCodeHash } from '../domain/recovery-codes';
import { acceptedStep } from '../domain/totp';
import type { OrdersApiDeps } from './deps';

/** What a typed code proves, before it is spent: a time step of the authenticator, or one recovery code. */
export type SecondFactorProof = { kind: 'totp'; step: bigint } | { kind: 'recovery_code'; hash: string };

/**
 * What `code` would prove for a person whose second factor is on: six digits the authenticator
 * shows now (one step of drift either way, a step not used before), or a recovery code's form.
 * Undefined when it can prove nothing; a recovery code is known good only once spent (`spendProof`).
 */
export function proofOf(deps: Pick<OrdersApiDeps, 'clock' | 'secretBox'>, user: UserRow, code: string): SecondFactorProof | undefined {
  if (user.totpSecretEncrypted === null || user.totpEnabledAt === null) return undefined;
  const typed = code.trim();
  if (/^\d{6}$/.test(typed)) {
    const secret = openTotpSecret(deps, user.id, user.totpSecretEncrypted);
    const step = secret === undefined ? undefined : acceptedStep(secret, typed, deps.clock.now(), user.totpLastStep);
    return step === undefined ? undefined : { kind: 'totp', step };
  }
  const normal = normalRecoveryCode(typed);
  return normal === undefined ? undefined : { kind: 'recovery_code', hash: recoveryCodeHash(normal) };
}

/** Spends what the code proved, conditionally: false when the step or the recovery code was taken first (or never existed). */
export async function spendProof(db: Db, userId: string, proof: SecondFactorProof, now: Date): Promise<boolean> {
  return proof.kind === 'totp' ? spendTotpStep(db, userId, proof.step) : spendRecoveryCode(db, userId, proof.hash, now);
}

export function openTotpSecret(deps: Pick<OrdersApiDeps, 'secretBox'>, userId: string, sealed: string): string | undefined {
  try {
    return deps.secretBox.open(sealed, { kind: 'user_totp', id: userId });
  } catch (error) {
    if (error instanceof SecretNotOpened) return undefined;
    throw error;
  }
}
