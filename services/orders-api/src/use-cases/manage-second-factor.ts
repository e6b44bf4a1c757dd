import type { Tx, UserRow } from '@pmatch/db';
import type { FailureThrottle } from '../data/login-throttle';
import { deleteOtherSessions } from '../data/console-sessions';
import { countUnusedRecoveryCodes, replaceRecoveryCodes } from '../data/recovery-codes';
import { enableTotp, findUserOfOrganisation, setTotpSecret } from '../data/users';
import { newRecoveryCodes, normalRecoveryCode, recoveryCodeHash } from '../domain/recovery-codes';
import { acceptedStep, newTotpSecret, totpUri } from '../domain/totp';
import { inAuditedTransaction, type AuditContext } from './audit';
import type { ConsoleDeps } from './console-login';
import { confirmPassword, confirmSecondFactor, type Reentered } from './console-reauthenticate';
import { keepToShowOnce, type ShowTo } from './shown-once';

/** The person who is asking, as stored now. */
export async function findPerson(deps: Pick<ConsoleDeps, 'database'>, person: { organisationId: string; userId: string }): Promise<UserRow> {
  return (await findUserOfOrganisation(deps.database.prisma, person.organisationId, person.userId))!;
}

/** How many of the person's recovery codes are still unused. */
export async function recoveryCodesLeft(deps: Pick<ConsoleDeps, 'database'>, user: UserRow): Promise<number> {
  return countUnusedRecoveryCodes(deps.database.prisma, user.id);
}

/** A secret to enrol in an authenticator app, with its otpauth URI, or undefined when the second factor is on or none is being set up. */
export function enrolmentOf(deps: Pick<ConsoleDeps, 'secretBox'>, user: UserRow): { secret: string; uri: string } | undefined {
  if (user.totpSecretEncrypted === null || user.totpEnabledAt !== null) return undefined;
  const secret = deps.secretBox.open(user.totpSecretEncrypted, { kind: 'user_totp', id: user.id });
  return { secret, uri: totpUri(secret, user.email) };
}

/**
 * Starts setting up a second factor once the person has typed their password again: a new secret,
 * sealed, not yet in force (any earlier one being set up is replaced). `on_already` when one is on.
 */
export async function startSecondFactorSetup(
  deps: ConsoleDeps,
  throttle: FailureThrottle,
  audit: AuditContext,
  user: UserRow,
  password: string,
): Promise<Reentered<object> | { outcome: 'on_already' }> {
  if (user.totpEnabledAt !== null) return { outcome: 'on_already' };
  const reentry = await confirmPassword(deps, throttle, audit, password);
  if (reentry !== 'confirmed') return { outcome: reentry };
  const secret = newTotpSecret();
  await setTotpSecret(deps.database.prisma, user.id, deps.secretBox.seal(secret, { kind: 'user_totp', id: user.id }), deps.clock.now());
  return { outcome: 'done' };
}

/**
 * Turns the second factor on when `code` proves the secret being set up, and makes its recovery
 * codes, kept to be shown once to this session (`displayId`); every other session of the person
 * ends. 'wrong_code' changes nothing; 'not_started' when there is nothing to confirm.
 */
export async function confirmSecondFactorSetup(
  deps: ConsoleDeps,
  user: UserRow,
  code: string,
  audit: AuditContext,
  showTo: ShowTo,
): Promise<{ outcome: 'enabled'; displayId: string } | { outcome: 'wrong_code' | 'not_started' }> {
  const enrolment = enrolmentOf(deps, user);
  if (enrolment === undefined) return { outcome: 'not_started' };
  const step = acceptedStep(enrolment.secret, code.trim(), deps.clock.now(), user.totpLastStep);
  if (step === undefined) return { outcome: 'wrong_code' };
  const displayId = await inAuditedTransaction(
    deps,
    { ...audit, mode: null },
    async (tx) => {
      await enableTotp(tx, user.id, step, deps.clock.now());
      await deleteOtherSessions(tx, user.id, showTo.sessionToken);
      return newCodesShownOnce(deps, tx, user, showTo, true);
    },
    () => ({ action: 'user.totp_enable', objectId: user.id, detail: {} }),
  );
  return { outcome: 'enabled', displayId };
}

/**
 * Turns the second factor off once the person has given a code of it again (from the app, or a
 * recovery code): its secret and recovery codes are removed and every other session ends.
 */
export async function turnOffSecondFactor(
  deps: ConsoleDeps,
  throttle: FailureThrottle,
  audit: AuditContext,
  user: UserRow,
  code: string,
  keepToken: string,
): Promise<Reentered<object>> {
  const reentry = await confirmSecondFactor(deps, throttle, audit, user, code);
  if (reentry !== 'confirmed') return { outcome: reentry };
  await inAuditedTransaction(
    deps,
    { ...audit, mode: null },
    async (tx) => {
      await setTotpSecret(tx, user.id, null, deps.clock.now());
      await deleteOtherSessions(tx, user.id, keepToken);
    },
    () => ({ action: 'user.totp_disable', objectId: user.id, detail: {} }),
  );
  return { outcome: 'done' };
}

/** Replaces the person's recovery codes, once they have given a code of their second factor again; the new ones are shown once. */
export async function replaceRecoveryCodesOf(
  deps: ConsoleDeps,
  throttle: FailureThrottle,
  audit: AuditContext,
  user: UserRow,
  code: string,
  showTo: ShowTo,
): Promise<Reentered<{ displayId: string }>> {
  const reentry = await confirmSecondFactor(deps, throttle, audit, user, code);
  if (reentry !== 'confirmed') return { outcome: reentry };
  const displayId = await inAuditedTransaction(
    deps,
    { ...audit, mode: null },
    (tx) => newCodesShownOnce(deps, tx, user, showTo, false),
    () => ({ action: 'user.recovery_codes_replace', objectId: user.id, detail: {} }),
  );
  return { outcome: 'done', displayId };
}

async function newCodesShownOnce(deps: ConsoleDeps, tx: Tx, user: UserRow, showTo: ShowTo, secondFactorTurnedOn: boolean): Promise<string> {
  const codes = newRecoveryCodes();
  await replaceRecoveryCodes(
    tx,
    user.id,
    codes.map((code) => recoveryCodeHash(normalRecoveryCode(code)!)),
    deps.clock.now(),
  );
  return keepToShowOnce(deps, tx, showTo, 'recovery_codes', { codes, secondFactorTurnedOn });
}
