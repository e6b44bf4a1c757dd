import type { Scope } from '../domain/actor';

/** The Prisma filter that keeps every read inside the caller's organisation, mode and account scope. */
export function scopeOf(scope: Scope): { organisationId: string; mode: string; bankAccountId?: string } {
  return {
    organisationId: scope.organisationId,
    mode: scope.mode,
    ...(scope.bankAccountId === null ? {} : { bankAccountId: scope.bankAccountId }),
  };
}
