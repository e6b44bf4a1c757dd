import { AppError, type Settings, type UpdateSettingsRequest } from '@pmatch/contracts';
import { settingsObject } from '@pmatch/db';
import type { Actor } from '../domain/actor';
import { readSettings, updateSettings } from '../data/settings';
import { findOrganisation, setRequireAdminTotp } from '../data/users';
import { inAuditedTransaction, type AuditContext } from './audit';
import type { FailureThrottle } from '../data/login-throttle';
import type { ConsoleDeps } from './console-login';
import { confirmPassword, type Reentered } from './console-reauthenticate';
import type { OrdersApiDeps } from './deps';

export async function getSettings(deps: Pick<OrdersApiDeps, 'database'>, actor: Actor): Promise<Settings> {
  return settingsObject(await readSettings(deps.database.prisma, actor.organisationId, actor.mode));
}

/**
 * Settings hold for every account of the organisation's mode, so an actor limited to one account
 * must not change how deposits into the others are matched.
 */
export function assertMayChangeSettings(actor: Actor): void {
  if (actor.bankAccountId !== null) {
    throw new AppError(
      'insufficient_scope',
      'This API key is limited to one bank account, and settings apply to every account of the organisation; change them with a key that is not limited to an account.',
    );
  }
}

export async function changeSettings(
  deps: Pick<OrdersApiDeps, 'database' | 'clock'>,
  actor: Actor,
  change: UpdateSettingsRequest,
  audit?: AuditContext,
): Promise<Settings> {
  assertMayChangeSettings(actor);
  const row = await inAuditedTransaction(
    deps,
    audit,
    (tx) => updateSettings(tx, actor.organisationId, actor.mode, change, deps.clock.now()),
    () =>
      change.matching_rules === undefined
        ? { action: 'settings.auto_confirm_late_orders', objectId: null, detail: { value: change.auto_confirm_late_orders } }
        : { action: 'settings.matching_rules', objectId: null, detail: { value: change.matching_rules } },
  );
  return settingsObject(row);
}

/** Whether the organisation requires its admins to use a second factor. */
export async function getAdminSecondFactorRule(deps: Pick<OrdersApiDeps, 'database'>, organisationId: string): Promise<boolean> {
  return (await findOrganisation(deps.database.prisma, organisationId)).requireAdminTotp;
}

/**
 * Requires (or stops requiring) every admin of the organisation to use a second factor, once the
 * admin asking has typed their password again (`confirmPassword`).
 */
export async function setAdminSecondFactorRule(
  deps: ConsoleDeps,
  throttle: FailureThrottle,
  audit: AuditContext,
  change: { required: boolean; password: string },
): Promise<Reentered<object>> {
  const reentry = await confirmPassword(deps, throttle, audit, change.password);
  if (reentry !== 'confirmed') return { outcome: reentry };
  await inAuditedTransaction(
    deps,
    { ...audit, mode: null },
    (tx) => setRequireAdminTotp(tx, audit.organisationId, change.required),
    () => ({ action: 'organisation.require_admin_totp', objectId: audit.organisationId, detail: { value: change.required } }),
  );
  return { outcome: 'done' };
}
