import type { PrismaClient } from '@pmatch/db';
import type { Clock, Logger } from '@pmatch/platform';
import { claimDueDeliveries, type ClaimedDelivery } from './data/deliveries';
import type { DispatcherMetrics } from './metrics';

export interface SchedulerLimits {
  concurrency: number;
  perEndpoint: number;
  leaseMs: number;
  pollIntervalMs: number;
}

/**
 * Runs due deliveries. Every retry lives in the database (webhook_deliveries.next_attempt_at), so
 * this loop holds nothing that a crash could lose: it polls for due rows, claims as many as it has
 * slots for, and starts each attempt without waiting for it. Slots are bounded in all and per
 * endpoint, and an endpoint whose slots are full is left out of the next claim, so a hanging
 * endpoint ties up at most its own slots while every other endpoint's deliveries go on.
 * "Now" is the injected clock's, so tests move time instead of waiting.
 */
export class DeliveryScheduler {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly inFlightByEndpoint = new Map<string, number>();
  private lastPass: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private again = false;
  private stopped = false;

  constructor(
    private readonly deps: {
      prisma: PrismaClient;
      clock: Clock;
      logger: Logger;
      metrics: DispatcherMetrics;
      attempt: (delivery: ClaimedDelivery) => Promise<void>;
    },
    private readonly limits: SchedulerLimits,
  ) {}

  start(): void {
    this.schedule(0);
  }

  /** Something may have become due (a new delivery, a freed slot): look now rather than at the next poll. */
  nudge(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  /** One claim pass; passes never overlap. Resolves with how many attempts it started. */
  runDue(): Promise<number> {
    const pass = this.lastPass.then(() => this.claimAndStart());
    this.lastPass = pass.catch(() => undefined);
    return pass;
  }

  /** Resolves once every attempt started so far has been recorded. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.lastPass;
    await this.drain();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
  }

  private async tick(): Promise<void> {
    this.ticking = true;
    let started = 0;
    try {
      started = await this.runDue();
    } catch (error) {
      this.deps.logger.error({ err: error }, 'claiming due deliveries failed; will retry');
    }
    this.ticking = false;
    const more = started > 0 || this.again;
    this.again = false;
    this.schedule(more ? 0 : this.limits.pollIntervalMs);
  }

  private async claimAndStart(): Promise<number> {
    const free = this.limits.concurrency - this.inFlight.size;
    if (free <= 0 || this.stopped) return 0;
    const busyEndpoints = [...this.inFlightByEndpoint].filter(([, n]) => n >= this.limits.perEndpoint).map(([id]) => id);
    const now = this.deps.clock.now();
    const claimed = await claimDueDeliveries(this.deps.prisma, now, {
      limit: free,
      leaseUntil: new Date(now.getTime() + this.limits.leaseMs),
      busyEndpoints,
      roomFor: (endpointId) => this.limits.perEndpoint - (this.inFlightByEndpoint.get(endpointId) ?? 0),
    });
    for (const delivery of claimed) this.launch(delivery);
    return claimed.length;
  }

  private launch(delivery: ClaimedDelivery): void {
    const endpointId = delivery.endpoint.id;
    this.inFlightByEndpoint.set(endpointId, (this.inFlightByEndpoint.get(endpointId) ?? 0) + 1);
    this.deps.metrics.attemptsInFlight.inc();
    const work = this.deps
      .attempt(delivery)
      .catch((error: unknown) => {
        // The lease brings the delivery back; nothing else is needed to retry it.
        this.deps.logger.error({ err: error, deliveryId: delivery.id }, 'delivery attempt failed to complete; it will be due again');
      })
      .finally(() => {
        const left = (this.inFlightByEndpoint.get(endpointId) ?? 1) - 1;
        if (left === 0) this.inFlightByEndpoint.delete(endpointId);
        else this.inFlightByEndpoint.set(endpointId, left);
        this.deps.metrics.attemptsInFlight.dec();
        this.inFlight.delete(work);
        this.nudge();
      });
    this.inFlight.add(work);
  }
}
