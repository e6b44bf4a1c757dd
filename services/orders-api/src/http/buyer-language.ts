import type { Request } from 'express';
import { PAGE_LANGUAGES, type PageLanguage } from '../domain/payment-page';

/**
 * The language of a buyer's page: `?lang=` (or the form's `lang`) wins; otherwise the request's
 * Accept-Language as express negotiates it (`req.acceptsLanguages`); Japanese when it names neither.
 */
export function buyerLanguageOf(req: Request, posted?: unknown): PageLanguage {
  for (const given of [req.query.lang, posted]) if (PAGE_LANGUAGES.includes(given as PageLanguage)) return given as PageLanguage;
  return req.acceptsLanguages(...PAGE_LANGUAGES) === 'en' ? 'en' : 'ja';
}
