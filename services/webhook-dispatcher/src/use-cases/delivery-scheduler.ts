import { performance } from 'node:perf_hooks';
import type { Database } from '@pmatch/db';
import type { Clock, Logger } from '@pmatch/platform';
import { claimDueDeliveries, type ClaimedDelivery, type EndpointShare } from '../data/claims';
import { skipDeliveriesOfSwitchedOffEndpoints } from '../data/endpoints';
import type { DispatcherMetrics } from './metrics';

export interface SchedulerLimits {
  concurrency: number;
  perEndpoint: number;
  leaseMs: number;
  pollIntervalMs: number;
  /** An attempt still unanswered after this long makes its endpoint slow (see `DeliveryScheduler`). */
  slowAfterMs: number;
}

/** An answer slower than this marks an endpoint slow, unless the HTTP deadline is shorter still. */
const SLOW_ANSWER_MS = 2_000;

/** When an attempt counts as slow for a given answer deadline: well before the deadline ends. */
export function slowAfterMs(timeoutMs: number): number {
  return Math.min(SLOW_ANSWER_MS, Math.floor(timeoutMs / 2));
}

/**
 * How long a nudge waits for more nudges before its pass runs: the events of one decision arrive
 * as separate messages a few milliseconds apart, and one claim then takes all their deliveries.
 */
const NUDGE_COALESCE_MS = 10;

/** Endpoints whose last answer is remembered; beyond this the oldest is forgotten (it becomes unknown). */
const REMEMBERED_ENDPOINTS = 5_000;

/** Test events waiting for a slot, per endpoint: a merchant pressing the button more often waits for none. */
const WAITING_TEST_EVENTS_PER_ENDPOINT = 3;

/** Work that holds a slot of an endpoint: a delivery attempt, or a test event outside the log. */
type SlotWork = () => Promise<void>;

/**
 * Runs due deliveries: polls (or is nudged), claims as many as it has free slots for, and starts
 * each attempt without waiting for it. Retries live in the database, so a crash loses nothing.
 * Slots are shared so that no endpoint, and no set of slow ones, can hold them all; test events
 * wait for a slot of their endpoint like deliveries. See docs/decisions/0022-webhook-delivery-slots.md.
 */
export class DeliveryScheduler {
  private readonly inFlight = new Set<Promise<void>>();
  /** When each attempt in flight started (performance.now()), per endpoint. */
  private readonly startedByEndpoint = new Map<string, number[]>();
  /** Whether an endpoint's last finished attempt answered promptly; insertion order is age. */
  private readonly lastAnswer = new Map<string, 'prompt' | 'slow'>();
  private readonly waitingTestEvents = new Map<string, SlotWork[]>();
  private readonly slowShare: number;
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
      database: Database;
      clock: Clock;
      logger: Logger;
      metrics: DispatcherMetrics;
      attempt: (delivery: ClaimedDelivery) => Promise<void>;
    },
    private readonly limits: SchedulerLimits,
  ) {
    this.slowShare = Math.max(1, limits.concurrency - Math.ceil(limits.concurrency / 4));
  }

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
   * Queues a test event for its endpoint's next free slot. Returns false, sending nothing, when
   * that endpoint already has as many waiting as allowed.
   */
  enqueueTestEvent(endpointId: string, send: SlotWork): boolean {
    const waiting = this.waitingTestEvents.get(endpointId) ?? [];
    if (waiting.length >= WAITING_TEST_EVENTS_PER_ENDPOINT) return false;
    waiting.push(send);
    this.waitingTestEvents.set(endpointId, waiting);
    this.nudge();
    return true;
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
    if (sweep) await skipDeliveriesOfSwitchedOffEndpoints(this.deps.database.sql, now);
    const shares = this.endpointShares();
    const budget = {
      free: this.limits.concurrency - this.inFlight.size,
      slowFree: this.slowShare - [...shares.values()].reduce((held, s) => held + (s.slow ? s.inFlight : 0), 0),
    };
    const tested = this.startWaitingTestEvents(shares, budget);
    if (budget.free <= 0) return tested;
    this.deps.metrics.claimPasses.inc();
    const claimed = await claimDueDeliveries(this.deps.database.sql, now, {
      leaseUntil: new Date(now.getTime() + this.limits.leaseMs),
      free: budget.free,
      slowFree: Math.max(0, budget.slowFree),
      known: [...shares.values()],
      unknownAllowance: 1,
    });
    for (const delivery of claimed) this.launch(delivery.endpoint.id, () => this.deps.attempt(delivery));
    return tested + claimed.length;
  }

  /** What each endpoint this process knows of may start now (see the class comment). */
  private endpointShares(): Map<string, EndpointShare> {
    const now = performance.now();
    const shares = new Map<string, EndpointShare>();
    for (const endpointId of this.startedByEndpoint.keys()) shares.set(endpointId, this.shareOf(endpointId, now));
    for (const endpointId of this.lastAnswer.keys()) if (!shares.has(endpointId)) shares.set(endpointId, this.shareOf(endpointId, now));
    return shares;
  }

  private shareOf(endpointId: string, now: number): EndpointShare {
    const started = this.startedByEndpoint.get(endpointId) ?? [];
    const answer = this.lastAnswer.get(endpointId);
    const slow = answer === 'slow' || started.some((at) => now - at >= this.limits.slowAfterMs);
    const limit = answer === 'prompt' && !slow ? this.limits.perEndpoint : 1;
    return { endpointId, allowance: Math.max(0, limit - started.length), inFlight: started.length, slow };
  }

  /** Starts waiting test events where their endpoint has a slot; updates `shares` and `budget`. */
  private startWaitingTestEvents(shares: Map<string, EndpointShare>, budget: { free: number; slowFree: number }): number {
    let started = 0;
    for (const [endpointId, waiting] of this.waitingTestEvents) {
      const share = shares.get(endpointId) ?? { endpointId, allowance: 1, inFlight: 0, slow: false };
      while (waiting.length > 0 && budget.free > 0 && share.allowance > 0 && (!share.slow || budget.slowFree > 0)) {
        this.launch(endpointId, waiting.shift()!);
        budget.free -= 1;
        if (share.slow) budget.slowFree -= 1;
        share.allowance -= 1;
        share.inFlight += 1;
        started += 1;
      }
      shares.set(endpointId, share);
      if (waiting.length === 0) this.waitingTestEvents.delete(endpointId);
    }
    return started;
  }

  private launch(endpointId: string, work: SlotWork): void {
    const startedAt = performance.now();
    this.startedByEndpoint.set(endpointId, [...(this.startedByEndpoint.get(endpointId) ?? []), startedAt]);
    this.deps.metrics.attemptsInFlight.inc();
    const running = work()
      .catch((error: unknown) => {
        // The lease brings the delivery back; nothing else is needed to retry it.
        this.deps.logger.error({ err: error, endpointId }, 'delivery attempt failed to complete; it will be due again');
      })
      .finally(() => {
        // A pass leaves due work behind only for want of a slot: all of them taken, or all its
        // endpoint may hold. Unless this attempt held such a limit, its slot frees nothing waiting.
        const finishedAt = performance.now();
        const wasFull = this.inFlight.size >= this.limits.concurrency;
        const endpointWasFull = this.shareOf(endpointId, finishedAt).allowance === 0;
        const started = this.startedByEndpoint.get(endpointId)!;
        started.splice(started.indexOf(startedAt), 1);
        if (started.length === 0) this.startedByEndpoint.delete(endpointId);
        this.remember(endpointId, finishedAt - startedAt < this.limits.slowAfterMs ? 'prompt' : 'slow');
        this.deps.metrics.attemptsInFlight.dec();
        this.inFlight.delete(running);
        if (wasFull || endpointWasFull || this.waitingTestEvents.has(endpointId)) this.nudge();
      });
    this.inFlight.add(running);
  }

  private remember(endpointId: string, answer: 'prompt' | 'slow'): void {
    this.lastAnswer.delete(endpointId);
    this.lastAnswer.set(endpointId, answer);
    if (this.lastAnswer.size > REMEMBERED_ENDPOINTS) this.lastAnswer.delete(this.lastAnswer.keys().next().value!);
  }
}
