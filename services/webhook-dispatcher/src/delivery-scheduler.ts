import { performance } from 'node:perf_hooks';
import type { PrismaClient } from '@pmatch/db';
import type { Clock, Logger } from '@pmatch/platform';
import { claimDueDeliveries, skipDeliveriesOfSwitchedOffEndpoints, type ClaimedDelivery } from './data/deliveries';
import type { DispatcherMetrics } from './metrics';

export interface SchedulerLimits {
  concurrency: number;
  perEndpoint: number;
  leaseMs: number;
  pollIntervalMs: number;
}

/**
 * How long a nudge waits for more nudges before its pass runs: the events of one decision arrive
 * as separate messages a few milliseconds apart, and one claim then takes all their deliveries.
 */
const NUDGE_COALESCE_MS = 10;

/**
 * Runs due deliveries. Every retry lives in the database (webhook_deliveries.next_attempt_at), so
 * this loop holds nothing that a crash could lose: it polls for due rows, claims as many as it has
 * slots for, and starts each attempt without waiting for it. Slots are bounded in all and per
 * endpoint, and an endpoint whose slots are full is left out of the next claim, so a hanging
 * endpoint ties up at most its own slots while every other endpoint's deliveries go on.
 * "Now" is the injected clock's, so tests move time instead of waiting.
 *
 * A claim pass is one statement; passes are kept few. Nudges coalesce, and a finished attempt
 * nudges only when its slot was one a pass could have been short of (see `launch`). Skipping the
 * deliveries of switched-off endpoints, which the claim passes by anyway, waits for the poll.
 */
export class DeliveryScheduler {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly inFlightByEndpoint = new Map<string, number>();
  private lastPass: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  /** When the pending timer fires (performance.now()), so that a later nudge never postpones it. */
  private timerAt = Infinity;
  private lastSweepAt = -Infinity;
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

  /** Something may have become due (a new delivery, a freed slot): look soon rather than at the next poll. */
  nudge(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.schedule(NUDGE_COALESCE_MS);
  }

  /**
   * One claim pass; passes never overlap. With `sweep`, deliveries of switched-off or deleted
   * endpoints that are due are first marked skipped. Resolves with how many attempts it started.
   */
  runDue(options: { sweep?: boolean } = {}): Promise<number> {
    const pass = this.lastPass.then(() => this.claimAndStart(options.sweep ?? false));
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
    const at = performance.now() + delayMs;
    if (at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => void this.tick(), delayMs);
  }

  private async tick(): Promise<void> {
    this.timerAt = Infinity;
    this.ticking = true;
    const sweep = performance.now() - this.lastSweepAt >= this.limits.pollIntervalMs;
    if (sweep) this.lastSweepAt = performance.now();
    try {
      await this.runDue({ sweep });
    } catch (error) {
      this.deps.logger.error({ err: error }, 'claiming due deliveries failed; will retry');
    }
    this.ticking = false;
    const again = this.again;
    this.again = false;
    this.schedule(again ? NUDGE_COALESCE_MS : this.limits.pollIntervalMs);
  }

  private async claimAndStart(sweep: boolean): Promise<number> {
    if (this.stopped) return 0;
    const now = this.deps.clock.now();
    if (sweep) await skipDeliveriesOfSwitchedOffEndpoints(this.deps.prisma, now);
    const free = this.limits.concurrency - this.inFlight.size;
    if (free <= 0) return 0;
    this.deps.metrics.claimPasses.inc();
    const claimed = await claimDueDeliveries(this.deps.prisma, now, {
      limit: free,
      leaseUntil: new Date(now.getTime() + this.limits.leaseMs),
      perEndpoint: this.limits.perEndpoint,
      inFlight: this.inFlightByEndpoint,
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
        // A pass leaves a due delivery behind only for want of a slot: all of them taken, or all
        // of its endpoint's. Unless this attempt held such a limit, its slot frees nothing waiting.
        const held = this.inFlightByEndpoint.get(endpointId) ?? 1;
        const atLimit = this.inFlight.size >= this.limits.concurrency || held >= this.limits.perEndpoint;
        if (held === 1) this.inFlightByEndpoint.delete(endpointId);
        else this.inFlightByEndpoint.set(endpointId, held - 1);
        this.deps.metrics.attemptsInFlight.dec();
        this.inFlight.delete(work);
        if (atLimit) this.nudge();
      });
    this.inFlight.add(work);
  }
}
