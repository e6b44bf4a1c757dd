import type { UserRow } from '@pmatch/db';
import { deleteOtherSessions } from '../data/console-sessions';
import { enableTotp, findUserOfOrganisation, setTotpSecret } from '../data/users';
import { acceptedStep, newTotpSecret, totpUri } from '../domain/totp';
import { inAuditedTransaction, type AuditContext } from './audit';
import type { ConsoleDeps } from './console-login';
import { passwordConfirmed } from './console-reauthenticate';

/** The person who is asking, as stored now. */
export async function findPerson(deps: Pick<ConsoleDeps, 'database'>, person: { organisationId: string; userId: string }): Promise<UserRow> {
  return (await findUserOfOrganisation(deps.database.prisma, person.organisationId, person.userId))!;
}

/** A secret to enrol in an authenticator app, with its otpauth URI, or undefined when the second factor is on or none is being set up. */
export function enrolmentOf(deps: Pick<ConsoleDeps, 'secretBox'>, user: UserRow): { secret: string; uri: string } | undefined {
  if (user.totpSecretEncrypted === null || user.totpEnabledAt !== null) return undefined;
  const secret = deps.secretBox.open(user.totpSecretEncrypted, { kind: 'user_totp', id: user.id });
  return { secret, uri: totpUri(secret, user.email) };
}

/** Starts setting up a second factor: a new secret, sealed, not yet in force. False when one is on already. */
export async function startSecondFactorSetup(deps: ConsoleDeps, user: UserRow): Promise<boolean> {
  if (user.totpEnabledAt !== null) return false;
  const secret = newTotpSecret();
  await setTotpSecret(deps.database.prisma, user.id, deps.secretBox.seal(secret, { kind: 'user_totp', id: user.id }), deps.clock.now());
  return true;
}

/**
 * Turns the second factor on when `code` proves the secret being set up; every other session of
 * the person ends. 'wrong_code' changes nothing; 'not_started' when there is nothing to confirm.
 */
export async function confirmSecondFactorSetup(
  deps: ConsoleDeps,
  user: UserRow,
  code: string,
  keepToken: string,
  audit: AuditContext,
): Promise<'enabled' | 'wrong_code' | 'not_started'> {
  const enrolment = enrolmentOf(deps, user);
  if (enrolment === undefined) return 'not_started';
  const step = acceptedStep(enrolment.secret, code.trim(), deps.clock.now(), user.totpLastStep);
  if (step === undefined) return 'wrong_code';
  await inAuditedTransaction(
    deps,
    { ...audit, mode: null },
    async (tx) => {
      await enableTotp(tx, user.id, step, deps.clock.now());
      await deleteOtherSessions(tx, user.id, keepToken);
    },
    () => ({ action: 'user.totp_enable', objectId: user.id, detail: {} }),
  );
  return 'enabled';
}

/** Turns the second factor off once the person has typed their password again. */
export async function turnOffSecondFactor(deps: ConsoleDeps, user: UserRow, password: string, audit: AuditContext): Promise<'disabled' | 'wrong_password'> {
  if (!(await passwordConfirmed(deps, audit, password))) return 'wrong_password';
  await inAuditedTransaction(
    deps,
    { ...audit, mode: null },
    (tx) => setTotpSecret(tx, user.id, null, deps.clock.now()),
    () => ({ action: 'user.totp_disable', objectId: user.id, detail: {} }),
  );
  return 'disabled';
}
