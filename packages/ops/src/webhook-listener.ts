import { createHmac } from 'node:crypto';
import { WEBHOOK_LIMITS, type RecordedEventType } from '@pmatch/contracts';
import { Webhook } from 'standardwebhooks';
import { EXIT_CODES, OpsError } from './failures';

// `ops webhooks listen`: webhooks on a developer's machine, as `stripe listen` gives them. It reads
// the key's events as any client may (GET /v1/events, paged with starting_after, so none is
// skipped or repeated) and posts each to a local URL, signed per Standard Webhooks with a secret
// it prints. Nothing is registered with the service: the local URL needs neither https nor a
// public address. docs/decisions/0121-webhooks-forwarded-to-a-laptop-from-the-events-list.md

export interface ListenerSettings {
  /** orders-api, without `/v1`. */
  apiUrl: string;
  apiKey: string;
  forwardTo: string;
  secret: string;
  /** The types forwarded; undefined forwards every type. */
  types: readonly RecordedEventType[] | undefined;
  /** Forward the events after this one; undefined: only those recorded after the listener started. */
  startingAfter: string | undefined;
  pollIntervalMs: number;
}

/** Where the listener reports as it goes, and what stops it. */
export interface ListenerIo {
  /** One JSON object a line: the start (with the secret), then one line per event forwarded or poll that failed. */
  print(line: object): void;
  /** Aborted when the operator stops it (Ctrl-C); it stops after the event it is forwarding. */
  stop: AbortSignal;
}

export interface ListenerSummary {
  object: 'webhook_listener';
  stopped: true;
  forwarded: number;
  failed: number;
  /** Give it as --starting-after to go on where this run stopped. */
  last_event_id: string | null;
}

/**
 * The signing secret for one API key: the same every run, so the local server keeps its setting,
 * and worthless for learning the key (an HMAC of it).
 */
export function listenerSecretOf(apiKey: string): string {
  const key = createHmac('sha256', apiKey).update('pmatch ops webhooks listen').digest().subarray(0, 24);
  return `whsec_${key.toString('base64')}`;
}

interface ListedEvent {
  id: string;
  type: string;
}

interface EventPage {
  data: ListedEvent[];
  has_more: boolean;
}

/** A failure worth another poll (no answer, 429, 5xx): reported, then tried again. */
class PollFailed extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number | undefined,
  ) {
    super(message);
  }
}

const PAGE_SIZE = 100;
const MAX_BACKOFF_MS = 30_000;

/** One page of the key's events after `startingAfter`; a refusal that another try cannot mend is an OpsError. */
async function eventPage(settings: ListenerSettings, startingAfter: string | undefined, signal: AbortSignal): Promise<EventPage> {
  const url = new URL('/v1/events', settings.apiUrl);
  url.searchParams.set('limit', String(PAGE_SIZE));
  if (startingAfter !== undefined) url.searchParams.set('starting_after', startingAfter);
  let response: Response;
  try {
    response = await fetch(url, { headers: { authorization: `Bearer ${settings.apiKey}` }, signal: AbortSignal.any([signal, AbortSignal.timeout(30_000)]) });
  } catch (error) {
    throw new PollFailed(`the API at ${settings.apiUrl} did not answer (${(error as Error).message})`, undefined);
  }
  const body = (await response.json().catch(() => undefined)) as (EventPage & { error?: { code?: string; message?: string } }) | undefined;
  if (response.ok && body !== undefined && Array.isArray(body.data)) return body;
  const said = `GET /v1/events answered ${response.status}${body?.error?.message === undefined ? '' : `: ${body.error.message}`}`;
  if (response.status === 429 || response.status >= 500) {
    const seconds = Number(response.headers.get('retry-after'));
    throw new PollFailed(said, Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined);
  }
  if (response.status === 401) throw new OpsError('invalid_api_key', said, EXIT_CODES.usage, 'api-key');
  if (response.status === 400 && startingAfter !== undefined && startingAfter === settings.startingAfter) {
    throw new OpsError('parameter_invalid', said, EXIT_CODES.usage, 'starting-after');
  }
  throw new OpsError(body?.error?.code ?? 'internal_error', said, EXIT_CODES.failed);
}

/** Resolves after `ms`, or at once when `stop` aborts (never rejects). */
function pause(ms: number, stop: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (stop.aborted) {
      resolve();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      stop.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    stop.addEventListener('abort', done, { once: true });
  });
}

/** The id of the key's newest event now (paging to the end), or undefined when it has none. */
async function newestEventId(settings: ListenerSettings, stop: AbortSignal): Promise<string | undefined> {
  let newest: string | undefined;
  for (;;) {
    const page = await eventPage(settings, newest, stop).catch((error: unknown) => {
      // Before anything was printed, an API that does not answer ends the run: the operator retries.
      if (error instanceof PollFailed) throw new OpsError('service_unavailable', error.message, EXIT_CODES.failed, 'api-url');
      throw error;
    });
    newest = page.data.at(-1)?.id ?? newest;
    if (!page.has_more) return newest;
  }
}

/** Posts one event, signed, to the local URL; an answer other than 2xx (3xx included: never followed) or none in 10 s fails. */
async function forward(settings: ListenerSettings, event: ListedEvent): Promise<{ status_code: number | null; duration_ms: number; error: string | null }> {
  const body = JSON.stringify(event);
  const at = new Date();
  const started = performance.now();
  const timeoutMs = WEBHOOK_LIMITS.responseTimeoutMs;
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const response = await fetch(settings.forwardTo, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'pmatch-ops-webhooks-listen/1',
        'webhook-id': event.id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(settings.secret).sign(event.id, at, body),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    return { status_code: response.status, duration_ms: elapsed(), error: response.ok ? null : `HTTP ${response.status}` };
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError';
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return {
      status_code: null,
      duration_ms: elapsed(),
      error: timedOut ? `no answer within ${timeoutMs} ms` : (cause?.code ?? cause?.message ?? String(error)),
    };
  }
}

/**
 * Follows the key's events until `io.stop` aborts, forwarding each of the chosen types once, in
 * recorded order. Prints the start (with the secret) once it knows where to begin, so an event
 * recorded after that line is forwarded. A failed forward is reported and not tried again; a
 * failed poll is reported and tried again with backoff. Resolves with what it did.
 */
export async function listenForEvents(settings: ListenerSettings, io: ListenerIo): Promise<ListenerSummary> {
  let cursor = settings.startingAfter ?? (await newestEventId(settings, io.stop));
  io.print({
    object: 'webhook_listener',
    secret: settings.secret,
    forward_to: settings.forwardTo,
    api_url: settings.apiUrl,
    events: settings.types ?? ['*'],
    starting_after: cursor ?? null,
  });
  const summary: ListenerSummary = { object: 'webhook_listener', stopped: true, forwarded: 0, failed: 0, last_event_id: null };
  let backoffMs = settings.pollIntervalMs;
  while (!io.stop.aborted) {
    let page: EventPage;
    try {
      page = await eventPage(settings, cursor, io.stop);
      backoffMs = settings.pollIntervalMs;
    } catch (error) {
      if (!(error instanceof PollFailed)) throw error;
      if (io.stop.aborted) break;
      const waitMs = Math.max(backoffMs, error.retryAfterMs ?? 0);
      io.print({ object: 'poll_failed', error: error.message, retry_in_ms: waitMs });
      backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
      await pause(waitMs, io.stop);
      continue;
    }
    for (const event of page.data) {
      if (io.stop.aborted) break;
      if (settings.types === undefined || (settings.types as readonly string[]).includes(event.type)) {
        const outcome = await forward(settings, event);
        io.print({ object: 'forwarded_event', event_id: event.id, type: event.type, ...outcome });
        if (outcome.error === null) summary.forwarded += 1;
        else summary.failed += 1;
      }
      cursor = event.id;
    }
    if (!page.has_more) await pause(settings.pollIntervalMs, io.stop);
  }
  return { ...summary, last_event_id: cursor ?? null };
}
