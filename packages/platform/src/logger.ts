import pino, { type Logger } from 'pino';

export type { Logger };

/** Paths that may carry credentials; they are replaced before a line is written. */
const REDACT = [
  'req.headers.authorization',
  'req.headers["webhook-signature"]',
  'headers.authorization',
  'authorization',
  'secret',
  'key',
  'password',
  '*.secret',
  '*.key',
  '*.password',
  'account_number',
  '*.account_number',
];

export function createLogger(service: string, level: string): Logger {
  return pino({ name: service, level, redact: { paths: REDACT, censor: '[redacted]' }, base: { service } });
}
