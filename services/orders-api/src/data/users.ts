import type { UserRole } from '@pmatch/contracts';
import { sha256Of, type Db, type Tx, type UserRow } from '@pmatch/db';

/** The active account of an address (one has set a password there once), the one that logs in with it. */
export async function findActiveUserByEmail(db: Db, email: string): Promise<UserRow | null> {
  return db.user.findFirst({ where: { email: email.trim().toLowerCase(), activatedAt: { not: null } } });
}

export async function findUserOfOrganisation(db: Db, organisationId: string, userId: string): Promise<UserRow | null> {
  return db.user.findFirst({ where: { id: userId, organisationId } });
}

export async function listUsers(db: Db, organisationId: string): Promise<UserRow[]> {
  return db.user.findMany({ where: { organisationId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

/** The user whose unexpired setup token this is. */
export async function findUserBySetupToken(db: Db, token: string, now: Date): Promise<UserRow | null> {
  return db.user.findFirst({ where: { passwordSetupHash: sha256Of(token), passwordSetupExpiresAt: { gt: now } } });
}

/**
 * Sets the password and spends the token, only if the token is still the user's and unexpired; the
 * account becomes (or stays) the active one of its address. Throws a unique violation when the
 * address is already another organisation's active account.
 */
export async function setPasswordWithToken(db: Db, token: string, passwordHash: string, now: Date): Promise<boolean> {
  const changed = await db.$executeRaw`
    UPDATE users SET password_hash = ${passwordHash}, password_setup_hash = NULL, password_setup_expires_at = NULL,
      activated_at = COALESCE(activated_at, ${now}), updated_at = ${now}
    WHERE password_setup_hash = ${sha256Of(token)} AND password_setup_expires_at > ${now}`;
  return changed === 1;
}

/** Gives a user a new one-time set-up token (an invitation sent again, a password reset asked for), replacing any earlier one. */
export async function setPasswordSetup(db: Db, userId: string, setup: { hash: string; expiresAt: Date }, now: Date): Promise<void> {
  await db.user.update({ where: { id: userId }, data: { passwordSetupHash: setup.hash, passwordSetupExpiresAt: setup.expiresAt, updatedAt: now } });
}

/**
 * Changes a role unless that would leave the organisation without an admin: one statement that
 * counts the other admins under a lock on the organisation's users (an advisory lock, so two
 * admins demoting each other at once cannot both succeed).
 */
export async function changeRole(tx: Tx, organisationId: string, userId: string, role: UserRole, now: Date): Promise<'changed' | 'last_admin' | 'missing'> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`users:${organisationId}`}, 0))`;
  const user = await tx.user.findFirst({ where: { id: userId, organisationId } });
  if (user === null) return 'missing';
  if (user.role === 'admin' && role !== 'admin' && (await otherAdmins(tx, organisationId, userId)) === 0) return 'last_admin';
  await tx.user.update({ where: { id: userId }, data: { role, updatedAt: now } });
  return 'changed';
}

/** Removes a user (their sessions go with them) unless they are the organisation's last admin. */
export async function removeUser(tx: Tx, organisationId: string, userId: string): Promise<'removed' | 'last_admin' | 'missing'> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`users:${organisationId}`}, 0))`;
  const user = await tx.user.findFirst({ where: { id: userId, organisationId } });
  if (user === null) return 'missing';
  if (user.role === 'admin' && (await otherAdmins(tx, organisationId, userId)) === 0) return 'last_admin';
  await tx.user.delete({ where: { id: userId } });
  return 'removed';
}

async function otherAdmins(db: Db, organisationId: string, userId: string): Promise<number> {
  return db.user.count({ where: { organisationId, role: 'admin', id: { not: userId } } });
}

/** Starts (a secret not yet in force) or ends (null) a person's second factor; ending it also removes their recovery codes. */
export async function setTotpSecret(db: Db, userId: string, secretEncrypted: string | null, now: Date): Promise<void> {
  if (secretEncrypted === null) await db.userRecoveryCode.deleteMany({ where: { userId } });
  await db.user.update({ where: { id: userId }, data: { totpSecretEncrypted: secretEncrypted, totpEnabledAt: null, totpLastStep: null, updatedAt: now } });
}

/** Turns the second factor on, spending the step of the code that proved it. */
export async function enableTotp(db: Db, userId: string, step: bigint, now: Date): Promise<void> {
  await db.user.update({ where: { id: userId }, data: { totpEnabledAt: now, totpLastStep: step, updatedAt: now } });
}

/** Spends a code's time step; false when a code of that step or later was taken first. */
export async function spendTotpStep(db: Db, userId: string, step: bigint): Promise<boolean> {
  const changed = await db.user.updateMany({
    where: { id: userId, OR: [{ totpLastStep: null }, { totpLastStep: { lt: step } }] },
    data: { totpLastStep: step },
  });
  return changed.count === 1;
}

export async function findOrganisation(db: Db, organisationId: string): Promise<{ id: string; name: string; requireAdminTotp: boolean }> {
  return db.organisation.findUniqueOrThrow({ where: { id: organisationId }, select: { id: true, name: true, requireAdminTotp: true } });
}

export async function setRequireAdminTotp(db: Db, organisationId: string, required: boolean): Promise<void> {
  await db.organisation.update({ where: { id: organisationId }, data: { requireAdminTotp: required }, select: { id: true } });
}
