import { currentTrace } from '@pmatch/db';
import pino, { type Logger } from 'pino';

export type { Logger };

/** Fields that may carry credentials or a full bank account number; replaced before a line is written. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["webhook-signature"]',
  'headers.authorization',
  'headers["webhook-signature"]',
  'authorization',
  'secret',
  'key',
  'password',
  'accountNumber',
  'account_number',
  'secretEncrypted',
  'previousSecretEncrypted',
  'keyHash',
  '*.secret',
  '*.key',
  '*.password',
  '*.accountNumber',
  '*.account_number',
  '*.secretEncrypted',
  '*.previousSecretEncrypted',
  '*.keyHash',
];

/**
 * Credentials known by their form, replaced wherever they stand in a line, a message or an error's
 * text included, where no field name gives them away: API keys (a near miss too: a key one
 * character off is still most of a key), signing secrets, the tokens of payment pages and payment
 * links (the token in /pay/{token} or /link/{token} is all that keeps a stranger from the page), and
 * the console's password set-up tokens (`?token=` of a set-up link, and the path of links made before
 * the token moved to the query).
 */
const CREDENTIALS: [RegExp, string][] = [
  [/svc_(test|live)_[0-9A-Za-z]+/g, 'svc_$1_[redacted]'],
  [/whsec_[A-Za-z0-9+/=]+/g, 'whsec_[redacted]'],
  [/\/(pay|link)\/[^/?#"\s\\]+/g, '/$1/[token]'],
  [/\/dashboard\/setup-password\/[^/?#"\s\\]+/g, '/dashboard/setup-password/[token]'],
  [/([?&]token=)[^&#"\s\\]+/g, '$1[token]'],
];

export function scrubCredentials(line: string): string {
  return CREDENTIALS.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), line);
}

export function createLogger(service: string, level: string): Logger {
  return pino({
    name: service,
    level,
    redact: { paths: REDACT, censor: '[redacted]' },
    base: { service },
    // Every line written while work of a trace runs names it: one deposit's lines in every service share trace_id.
    mixin: () => {
      const trace = currentTrace();
      return trace === undefined ? {} : { trace_id: trace.traceId, span_id: trace.spanId };
    },
    hooks: { streamWrite: scrubCredentials },
  });
}
