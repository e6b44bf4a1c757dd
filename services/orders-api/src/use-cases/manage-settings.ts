import { AppError, type Settings, type UpdateSettingsRequest } from '@pmatch/contracts';
import { settingsView } from '@pmatch/db';
import type { Actor } from '../domain/actor';
import { readSettings, updateSettings } from '../data/settings';
import type { OrdersApiDeps } from './deps';

export async function getSettings(deps: Pick<OrdersApiDeps, 'database'>, actor: Actor): Promise<Settings> {
  return settingsView(await readSettings(deps.database.prisma, actor.organisationId, actor.mode));
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

export async function changeSettings(deps: Pick<OrdersApiDeps, 'database' | 'clock'>, actor: Actor, change: UpdateSettingsRequest): Promise<Settings> {
  assertMayChangeSettings(actor);
  return settingsView(await updateSettings(deps.database.prisma, actor.organisationId, actor.mode, change, deps.clock.now()));
}
