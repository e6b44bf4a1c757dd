import { accountEn, accountJa } from './texts/account';
import { apiKeysEn, apiKeysJa } from './texts/api-keys';
import { auditEn, auditJa } from './texts/audit';
import { authEn, authJa } from './texts/auth';
import { commonEn, commonJa } from './texts/common';
import { dedicatedAccountsEn, dedicatedAccountsJa } from './texts/dedicated-accounts';
import { depositsEn, depositsJa } from './texts/deposits';
import { errorsEn, errorsJa } from './texts/errors';
import { eventsEn, eventsJa } from './texts/events';
import { layoutEn, layoutJa } from './texts/layout';
import { ordersEn, ordersJa } from './texts/orders';
import { payerAliasesEn, payerAliasesJa } from './texts/payer-aliases';
import { overviewEn, overviewJa } from './texts/overview';
import { securityEn, securityJa } from './texts/security';
import { settingsEn, settingsJa } from './texts/settings';
import { teamEn, teamJa } from './texts/team';
import { transferToEn, transferToJa } from './texts/transfer-to';
import { webhooksEn, webhooksJa } from './texts/webhooks';

/**
 * The console's words in Japanese (the default) and English, gathered from one module per console
 * area in texts/; English must say everything Japanese does.
 */
const ja = {
  ...layoutJa,
  ...authJa,
  ...commonJa,
  ...overviewJa,
  ...depositsJa,
  ...payerAliasesJa,
  ...ordersJa,
  ...eventsJa,
  ...webhooksJa,
  ...apiKeysJa,
  ...settingsJa,
  ...dedicatedAccountsJa,
  ...teamJa,
  ...auditJa,
  ...accountJa,
  ...errorsJa,
  ...securityJa,
  ...transferToJa,
};

export type Texts = typeof ja;

const en: Texts = {
  ...layoutEn,
  ...authEn,
  ...commonEn,
  ...overviewEn,
  ...depositsEn,
  ...payerAliasesEn,
  ...ordersEn,
  ...eventsEn,
  ...webhooksEn,
  ...apiKeysEn,
  ...settingsEn,
  ...dedicatedAccountsEn,
  ...teamEn,
  ...auditEn,
  ...accountEn,
  ...errorsEn,
  ...securityEn,
  ...transferToEn,
};

export const LANGUAGES = ['ja', 'en'] as const;
export type Language = (typeof LANGUAGES)[number];
export const TEXTS: Record<Language, Texts> = { ja, en };

/**
 * `?lang=` first, then the language cookie, then the request's Accept-Language as express
 * negotiates it (`req.acceptsLanguages`); Japanese unless English is preferred.
 */
export function chooseLanguage(query: unknown, cookie: string | undefined, acceptsLanguages: (...offered: Language[]) => string | false): Language {
  for (const given of [query, cookie]) if (given === 'ja' || given === 'en') return given;
  return acceptsLanguages(...LANGUAGES) === 'en' ? 'en' : 'ja';
}
