import { keepLastOnFailure, outOfScopeCounter } from '@pmatch/platform';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface MatcherMetrics {
  /** A deposit's decision was written: its outcome, its reason, and how long after the deposit was stored. */
  decided(outcome: string, reason: string, sinceStoredSeconds: number): void;
  /** How long a decision waited for its bank account's lock. */
  lockWaited(seconds: number): void;
  /** A message (or an order of one) named rows outside its claimed account or organisation and was refused. */
  outOfScope(queue: string): void;
}

/** Deposits waiting for a person (held) or for an order (unmatched): read from the database at each scrape. */
export type CountWaitingDeposits = () => Promise<{ held: number; unmatched: number }>;

export function createMatcherMetrics(registry: Registry, countWaiting: CountWaitingDeposits): MatcherMetrics {
  const registers = [registry];
  const decisions = new Counter({
    name: 'pmatch_decisions_total',
    help: 'Deposit decisions written, by outcome (confirmed, held, unmatched) and reason',
    labelNames: ['outcome', 'reason'],
    registers,
  });
  const latency = new Histogram({
    name: 'pmatch_decision_latency_seconds',
    help: 'From a deposit stored by bank-ingest (its notification, statement or test deposit) to its decision written',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers,
  });
  const lockWait = new Histogram({
    name: 'pmatch_lock_wait_seconds',
    help: "Time a decision waited for its bank account's lock",
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  new Gauge({
    name: 'pmatch_deposits_backlog',
    help: 'Deposits waiting, by status: held (a person decides) or unmatched (no open order fits); every replica reports the same count',
    labelNames: ['status'],
    registers,
    async collect() {
      await keepLastOnFailure(async () => {
        const counts = await countWaiting();
        this.set({ status: 'held' }, counts.held);
        this.set({ status: 'unmatched' }, counts.unmatched);
      });
    },
  });
  return {
    decided: (outcome, reason, sinceStoredSeconds) => {
      decisions.inc({ outcome, reason });
      latency.observe(Math.max(0, sinceStoredSeconds));
    },
    lockWaited: (seconds) => lockWait.observe(seconds),
    outOfScope: outOfScopeCounter(registry),
  };
}
