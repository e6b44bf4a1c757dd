import { keepLastOnFailure, outOfScopeCounter } from '@pmatch/platform';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { WebhookBacklog } from '../data/backlog';

export interface DispatcherMetrics {
  eventsReceived: Counter<'type'>;
  eventsSwept: Counter;
  attempts: Counter<'outcome'>;
  attemptDuration: Histogram<'outcome'>;
  deliveriesFinished: Counter<'status'>;
  attemptsInFlight: Gauge;
  claimPasses: Counter;
  endpointsSwitchedOff: Counter;
  testEventsSent: Counter<'outcome'>;
  emails: Counter<'kind' | 'outcome'>;
  /** Messages (or events of one) refused as out of scope, by queue. */
  outOfScope: (queue: string) => void;
}

/**
 * The dispatcher's metrics. `readBacklog` is called at each scrape for the gauges an operator is
 * paged on and KEDA scales by (due deliveries, the oldest one's wait, endpoints switched off);
 * every replica reports the same values.
 */
export function createMetrics(registry: Registry, readBacklog?: () => Promise<WebhookBacklog & { now: Date }>): DispatcherMetrics {
  const registers = [registry];
  if (readBacklog !== undefined) backlogGauges(registers, readBacklog);
  return {
    eventsReceived: new Counter({
      name: 'webhook_events_received_total',
      help: 'Events taken in (from the broker or the event sweep)',
      labelNames: ['type'],
      registers,
    }),
    eventsSwept: new Counter({
      name: 'webhook_events_swept_total',
      help: 'Events the event sweep took in because their event.recorded message never arrived',
      registers,
    }),
    attempts: new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Delivery attempts by outcome (succeeded, failed)',
      labelNames: ['outcome'],
      registers,
    }),
    attemptDuration: new Histogram({
      name: 'webhook_delivery_attempt_duration_seconds',
      help: 'Time from sending a webhook to its answer (or failure)',
      labelNames: ['outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    deliveriesFinished: new Counter({
      name: 'webhook_deliveries_finished_total',
      help: 'Deliveries that reached a final status (succeeded, failed)',
      labelNames: ['status'],
      registers,
    }),
    attemptsInFlight: new Gauge({ name: 'webhook_delivery_attempts_in_flight', help: 'Attempts waiting for an answer', registers }),
    claimPasses: new Counter({ name: 'webhook_delivery_claim_passes_total', help: 'Passes claiming due deliveries (one statement each)', registers }),
    endpointsSwitchedOff: new Counter({
      name: 'webhook_endpoints_switched_off_total',
      help: 'Endpoints switched off after 72 hours of failures',
      registers,
    }),
    testEventsSent: new Counter({
      name: 'webhook_test_events_total',
      help: 'webhook.test sends by outcome (succeeded, failed, dropped: too many waiting for the endpoint)',
      labelNames: ['outcome'],
      registers,
    }),
    emails: new Counter({ name: 'webhook_emails_total', help: 'Owner e-mails by kind and outcome (sent, failed)', labelNames: ['kind', 'outcome'], registers }),
    outOfScope: outOfScopeCounter(registry),
  };
}

function backlogGauges(registers: Registry[], readBacklog: () => Promise<WebhookBacklog & { now: Date }>): void {
  // One read serves the three gauges of a scrape: the first to be collected reads, the others reuse it.
  let reading: Promise<WebhookBacklog & { now: Date }> | undefined;
  const read = () => {
    reading ??= readBacklog().finally(() => setImmediate(() => (reading = undefined)));
    return reading;
  };
  new Gauge({
    name: 'pmatch_webhook_backlog',
    help: 'Webhook deliveries due now (first attempts and retries whose time has come)',
    registers,
    async collect() {
      await keepLastOnFailure(async () => this.set((await read()).due));
    },
  });
  new Gauge({
    name: 'pmatch_webhook_oldest_due_age_seconds',
    help: 'How long the oldest due webhook delivery has been due (0 when none is)',
    registers,
    async collect() {
      await keepLastOnFailure(async () => {
        const { oldestDueAt, now } = await read();
        this.set(oldestDueAt === null ? 0 : Math.max(0, (now.getTime() - oldestDueAt.getTime()) / 1000));
      });
    },
  });
  new Gauge({
    name: 'pmatch_webhook_endpoints_disabled',
    help: 'Webhook endpoints switched off after 72 hours of failures (and not deleted)',
    registers,
    async collect() {
      await keepLastOnFailure(async () => this.set((await read()).endpointsSwitchedOff));
    },
  });
}
