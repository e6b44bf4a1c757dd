import type { Mode, UpdateSettingsRequest } from '@pmatch/contracts';
import type { PrismaClient, SettingRow } from '@pmatch/db';

/** The settings of an organisation and mode; an organisation without a row has the defaults. */
export async function readSettings(prisma: PrismaClient, organisationId: string, mode: Mode): Promise<SettingRow> {
  return prisma.setting.upsert({
    where: { organisationId_mode: { organisationId, mode } },
    create: { organisationId, mode },
    update: {},
  });
}

export async function updateSettings(
  prisma: PrismaClient,
  organisationId: string,
  mode: Mode,
  change: UpdateSettingsRequest,
  now: Date,
): Promise<SettingRow> {
  const data = {
    ...(change.auto_confirm_late_orders === undefined ? {} : { autoConfirmLateOrders: change.auto_confirm_late_orders }),
    ...(change.matching_rules === undefined ? {} : { matchingRules: change.matching_rules }),
    updatedAt: now,
  };
  return prisma.setting.upsert({
    where: { organisationId_mode: { organisationId, mode } },
    create: { organisationId, mode, ...data },
    update: data,
  });
}
