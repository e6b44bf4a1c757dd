import { z } from './zod';

/** The rules that compare the depositor name with the payer name, in the order they are tried. */
export const NAME_RULES = ['kana_width', 'corporate_abbreviation', 'decorated', 'truncated'] as const;
export type NameRule = (typeof NAME_RULES)[number];

/**
 * The matching rules a seller can enable (docs/guide.md "Matching rules"), in catalogue order (the
 * order rules are tried): the name rules, then the payers a person taught the service
 * (`learned_payer`), then the order's transfer code written before the name (`transfer_code`), then
 * the dedicated transfer account the deposit went to (`dedicated_account`).
 */
export const MATCHING_RULES = [...NAME_RULES, 'learned_payer', 'transfer_code', 'dedicated_account'] as const;
export type MatchingRule = (typeof MATCHING_RULES)[number];

/** What a person of the seller console may do: everything, decide deposits and orders, or read. Mirrors the CHECK on users.role. */
export const USER_ROLES = ['admin', 'operator', 'viewer'] as const;
export type UserRole = (typeof USER_ROLES)[number];

/** Mirrors the CHECK on api_keys.permission. */
export const API_KEY_PERMISSIONS = ['read_write', 'read_only'] as const;
export type ApiKeyPermission = (typeof API_KEY_PERMISSIONS)[number];

export const Settings = z
  .object({
    object: z.literal('settings'),
    livemode: z.boolean(),
    auto_confirm_late_orders: z.boolean(),
    matching_rules: z.array(z.enum(MATCHING_RULES)),
  })
  .openapi('Settings');
export type Settings = z.infer<typeof Settings>;

export const UpdateSettingsRequest = z
  .strictObject({
    auto_confirm_late_orders: z.boolean().optional(),
    matching_rules: z
      .array(z.enum(MATCHING_RULES))
      .max(MATCHING_RULES.length)
      .refine((rules) => new Set(rules).size === rules.length, { message: 'must not repeat a rule' })
      .optional(),
  })
  .refine((r) => Object.keys(r).length > 0, { message: 'give auto_confirm_late_orders or matching_rules' })
  .openapi('UpdateSettingsRequest');
export type UpdateSettingsRequest = z.infer<typeof UpdateSettingsRequest>;
