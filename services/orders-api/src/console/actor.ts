import type { Mode, UserRole } from '@pmatch/contracts';
import type { UserRow } from '@pmatch/db';
import type { Actor } from '../domain/actor';

/** A person of the console as the use cases see them, with what the console itself checks. */
export interface ConsoleActor extends Actor {
  userId: string;
  email: string;
  role: UserRole;
}

/**
 * A person acts on every account of their organisation in the mode they chose; a viewer only
 * reads. Their decisions are recorded as `user:usr_…` from `dashboard`.
 */
export function userActor(user: UserRow, mode: Mode, accountIds: readonly string[], dedicatedAccountIds: readonly string[] = []): ConsoleActor {
  const role = user.role as UserRole;
  return {
    organisationId: user.organisationId,
    mode,
    bankAccountId: null,
    permission: role === 'viewer' ? 'read_only' : 'read_write',
    accountIds,
    dedicatedAccountIds,
    decidedBy: `user:${user.id}`,
    trigger: 'dashboard',
    userId: user.id,
    email: user.email,
    role,
  };
}

const RANK: Record<UserRole, number> = { viewer: 0, operator: 1, admin: 2 };

/** Whether `role` may do what `needed` may: admin ⊃ operator ⊃ viewer. */
export function mayAct(role: UserRole, needed: UserRole): boolean {
  return RANK[role] >= RANK[needed];
}
