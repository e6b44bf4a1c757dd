import type { AuthContext } from '../domain/auth';

/** The WHERE clause that keeps every read inside the caller's organisation, mode and account scope. */
export function scopeOf(auth: AuthContext): { organisationId: string; mode: string; bankAccountId?: string } {
  return {
    organisationId: auth.organisationId,
    mode: auth.mode,
    ...(auth.bankAccountId === null ? {} : { bankAccountId: auth.bankAccountId }),
  };
}
