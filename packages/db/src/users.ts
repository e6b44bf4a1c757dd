import { createHash } from 'node:crypto';
import { AppError, newId, randomBase62, type UserRole } from '@pmatch/contracts';
import type { Db, UserRow } from './client';
import { isUniqueViolation } from './client';

/** A password-setup link works this long, once. */
export const PASSWORD_SETUP_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** Where a person sets their password; the token in it is the only thing that opens it. */
export function passwordSetupUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/$/, '')}/dashboard/setup-password/${token}`;
}

export function sha256Of(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A new one-time setup token: the text for the link, and what is stored of it. */
export function newPasswordSetup(now: Date): { token: string; hash: string; expiresAt: Date } {
  const token = randomBase62(40);
  return { token, hash: sha256Of(token), expiresAt: new Date(now.getTime() + PASSWORD_SETUP_LIFETIME_MS) };
}

/**
 * Adds a person to an organisation with a one-time password-setup token (24 hours); resolves with
 * the row and the token, which is stored only as its hash. An e-mail address already in use
 * anywhere is refused.
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
    if (isUniqueViolation(error)) throw new AppError('parameter_invalid', 'A user with this e-mail address already exists.', { param: 'email' });
    throw error;
  }
}
