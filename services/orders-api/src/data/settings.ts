import type { Mode, UpdateSettingsRequest } from '@pmatch/contracts';
import type { Db, SettingRow, SettingValues } from '@pmatch/db';

/**
 * The settings of an organisation and mode. Reading writes nothing: an organisation without a
 * row (ops creates one per mode with the organisation) has the column defaults of the migration.
 */
export async function readSettings(db: Db, organisationId: string, mode: Mode): Promise<SettingValues> {
  const row = await db.setting.findUnique({
    where: { organisationId_mode: { organisationId, mode } },
    select: { mode: true, autoConfirmLateOrders: true, matchingRules: true },
  });
  return row ?? { mode, autoConfirmLateOrders: false, matchingRules: [] };
}

export async function updateSettings(db: Db, organisationId: string, mode: Mode, change: UpdateSettingsRequest, now: Date): Promise<SettingRow> {
  const data = {
    ...(change.auto_confirm_late_orders === undefined ? {} : { autoConfirmLateOrders: change.auto_confirm_late_orders }),
    ...(change.matching_rules === undefined ? {} : { matchingRules: change.matching_rules }),
    updatedAt: now,
  };
  return db.setting.upsert({
    where: { organisationId_mode: { organisationId, mode } },
    create: { organisationId, mode, ...data },
    update: data,
  });
}
