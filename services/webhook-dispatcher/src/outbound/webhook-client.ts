import { performance } from 'node:perf_hooks';
import { AppError } from '@pmatch/contracts';
import { request, type Dispatcher } from 'undici';
import { describeStatus } from '../domain/retries';

/** Bytes of a response read before the connection is dropped: enough to finish small answers, never stored. */
const RESPONSE_READ_LIMIT = 4096;

export interface HttpOutcome {
  /** The receiver's status code, or null when no answer came (refused, timeout, TLS, connection error). */
  statusCode: number | null;
  /** Why the attempt failed, for the delivery log; null when acknowledged with 2xx. */
  error: string | null;
  durationMs: number;
}

/**
 * POSTs a webhook through the organisation's pinned agent (`AgentsByOrganisation`): no redirects
 * followed, one deadline for the whole exchange.
 */
export class WebhookClient {
  constructor(
    private readonly agentFor: (organisationId: string) => Dispatcher,
    private readonly timeoutMs: number,
  ) {}

  async post(organisationId: string, url: string, headers: Record<string, string>, body: string): Promise<HttpOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const deadline = AbortSignal.timeout(this.timeoutMs);
    try {
      const response = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.agentFor(organisationId),
        signal: deadline,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      await response.body.dump({ limit: RESPONSE_READ_LIMIT, signal: deadline }).catch(() => undefined);
      return { statusCode: response.statusCode, error: describeStatus(response.statusCode), durationMs: elapsed() };
    } catch (error) {
      return { statusCode: null, error: describeFailure(error, deadline.aborted, this.timeoutMs), durationMs: elapsed() };
    }
  }
}

/** A short, stable text for the log: what went wrong, never a stack or a response body. */
function describeFailure(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `no answer within ${timeoutMs} ms`;
  const cause = error instanceof Error && error.cause instanceof Error && !(error instanceof AppError) ? error.cause : error;
  if (cause instanceof AppError) return `${cause.code}: ${cause.message}`;
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `no answer within ${timeoutMs} ms`;
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}
