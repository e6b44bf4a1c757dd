import { RECORDED_EVENT_TYPES, idPattern, type RecordedEventType } from '@pmatch/contracts';
import { z } from 'zod';
import { command, type CommandDefinition } from './cli-definition';
import { usageError } from './failures';
import { listenForEvents, listenerSecretOf } from './webhook-listener';

/** Where orders-api is when neither --api-url nor PAYMENTS_API_URL says: `npm start`'s. */
export const DEFAULT_API_URL = 'http://localhost:3000';
export const POLL_INTERVAL_DEFAULT_MS = 1000;

const httpUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}, 'must be an http:// or https:// URL without a user name or password');

const apiKey = z.string().regex(/^svc_(test|live)_[0-9A-Za-z]+$/, 'must be an API key, svc_test_… or svc_live_…');

const eventTypeList = z.string().transform((value, context): RecordedEventType[] | undefined => {
  const names = value.split(',').map((name) => name.trim());
  if (names.length === 1 && names[0] === '*') return undefined;
  const unknown = names.filter((name) => !(RECORDED_EVENT_TYPES as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0) {
    context.addIssue({
      code: 'custom',
      message: `has unknown type(s) ${unknown.map((n) => JSON.stringify(n)).join(', ')}; allowed: *, ${RECORDED_EVENT_TYPES.join(', ')}`,
    });
    return z.NEVER;
  }
  return [...new Set(names)] as RecordedEventType[];
});

const POLL_RULE = 'must be a whole number of milliseconds from 100 to 60000';
const pollInterval = z
  .string()
  .regex(/^[0-9]+$/, POLL_RULE)
  .transform(Number)
  .refine((ms) => ms >= 100 && ms <= 60_000, POLL_RULE);

/** Webhooks on a developer's machine. */
export const WEBHOOK_COMMANDS: readonly CommandDefinition[] = [
  command('webhooks listen', {
    summary:
      "Follows an API key's events (GET /v1/events) and POSTs each to a local URL, signed as a webhook with a secret it prints: " +
      'webhooks on a laptop without https or a public address. Prints a JSON line as it starts and per event; runs until stopped (Ctrl-C).',
    flags: z.strictObject({
      'forward-to': httpUrl,
      'api-url': httpUrl.optional(),
      'api-key': apiKey.optional(),
      events: eventTypeList.optional(),
      secret: z
        .string()
        .regex(/^whsec_[A-Za-z0-9+/]+=*$/, 'must be a signing secret, whsec_ and base64')
        .optional(),
      'starting-after': z.string().regex(idPattern('event'), 'must be an id like evt_…').optional(),
      'poll-interval': pollInterval.optional(),
    }),
    help: {
      'forward-to': { value: 'URL', description: 'where each event is posted, e.g. http://localhost:4000/webhooks (http is fine)' },
      'api-url': { value: 'URL', description: `orders-api, without /v1 (default $PAYMENTS_API_URL, else ${DEFAULT_API_URL})` },
      'api-key': { value: 'KEY', description: 'the API key whose events are followed (default $PAYMENTS_API_KEY; prefer it to a flag your shell keeps)' },
      events: { value: 'a,b', description: 'only these event types, comma-separated (default *, every type)' },
      secret: { value: 'whsec_…', description: 'sign with this secret (default: one derived from the key, the same every run)' },
      'starting-after': { value: 'EVT', description: 'also forward the events after this one (default: only those recorded from now on)' },
      'poll-interval': { value: 'MS', description: `how often the events are read when none are waiting (default ${POLL_INTERVAL_DEFAULT_MS})` },
    },
    run: ({ env, print, untilStopped }, flags) => {
      const key = flags['api-key'] ?? env.PAYMENTS_API_KEY;
      if (key === undefined || key === '') throw usageError('an API key is required: give --api-key or set PAYMENTS_API_KEY');
      if (!apiKey.safeParse(key).success) throw usageError('PAYMENTS_API_KEY must be an API key, svc_test_… or svc_live_…');
      const apiUrl = flags['api-url'] ?? env.PAYMENTS_API_URL ?? DEFAULT_API_URL;
      if (!httpUrl.safeParse(apiUrl).success) throw usageError('PAYMENTS_API_URL must be an http:// or https:// URL');
      return listenForEvents(
        {
          apiUrl,
          apiKey: key,
          forwardTo: flags['forward-to'],
          secret: flags.secret ?? listenerSecretOf(key),
          types: flags.events,
          startingAfter: flags['starting-after'],
          pollIntervalMs: flags['poll-interval'] ?? POLL_INTERVAL_DEFAULT_MS,
        },
        { print, stop: untilStopped() },
      );
    },
  }),
];
