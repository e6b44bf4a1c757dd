import { createHash } from 'node:crypto';
import { AppError, newId, randomBase62, type UserRole } from '@pmatch/contracts';
import type { Db, Tx, UserRow } from './client';
import { isUniqueViolation } from './client';

/** A password-setup link from an invitation or an admin works this long, once. */
export const PASSWORD_SETUP_LIFETIME_MS = 24 * 60 * 60 * 1000;

/**
 * Where a person sets their password; the token in it is the only thing that opens it. It is in the
 * query, which no log of ours writes (the path is), and the page trades it for a cookie at once.
 */
export function passwordSetupUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/$/, '')}/dashboard/setup-password?token=${token}`;
}

export function sha256Of(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A new one-time setup token: the text for the link, and what is stored of it. */
export function newPasswordSetup(now: Date, lifetimeMs = PASSWORD_SETUP_LIFETIME_MS): { token: string; hash: string; expiresAt: Date } {
  const token = randomBase62(40);
  return { token, hash: sha256Of(token), expiresAt: new Date(now.getTime() + lifetimeMs) };
}

/**
 * Adds a person to an organisation with a one-time password-setup token (24 hours); resolves with
 * the row and the token, which is stored only as its hash. An address already of this organisation
 * is refused; one active in another organisation is not (that person can never set a password
 * here: an address is one active account), so that adding reveals nothing of other organisations.
 */
export async function insertUser(
  db: Db,
  user: { organisationId: string; email: string; role: UserRole },
  now: Date,
): Promise<{ row: UserRow; setupToken: string }> {
  const setup = newPasswordSetup(now);
  try {
    const row = await db.user.create({
      data: {
        id: newId('user'),
        organisationId: user.organisationId,
        email: user.email.trim().toLowerCase(),
        role: user.role,
        passwordSetupHash: setup.hash,
        passwordSetupExpiresAt: setup.expiresAt,
        createdAt: now,
        updatedAt: now,
      },
    });
    return { row, setupToken: setup.token };
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('parameter_invalid', 'This organisation already has a user with this e-mail address.', { param: 'email' });
    throw error;
  }
}

/**
 * Resets a person's access: every session ends, the password, the second factor and its recovery
 * codes are gone, and a new one-time set-up token (24 hours) replaces any earlier one. The address
 * stays the person's (`activated_at` is kept). Resolves with the row and the token, or null when
 * there is no such user.
 */
export async function resetUserAccess(tx: Tx, userId: string, now: Date): Promise<{ row: UserRow; setupToken: string } | null> {
  const setup = newPasswordSetup(now);
  const changed = await tx.user.updateMany({
    where: { id: userId },
    data: {
      passwordHash: null,
      passwordSetupHash: setup.hash,
      passwordSetupExpiresAt: setup.expiresAt,
      totpSecretEncrypted: null,
      totpEnabledAt: null,
      totpLastStep: null,
      updatedAt: now,
    },
  });
  if (changed.count !== 1) return null;
  await tx.consoleSession.deleteMany({ where: { userId } });
  await tx.userRecoveryCode.deleteMany({ where: { userId } });
  return { row: await tx.user.findUniqueOrThrow({ where: { id: userId } }), setupToken: setup.token };
}
