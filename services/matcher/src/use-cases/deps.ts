import { isUniqueViolation, type Database, type PrismaClient } from '@pmatch/db';
import type { Clock, Logger, RedisLock } from '@pmatch/platform';
import { StaleDecisionError } from '../data/conditional-writes';
import type { NameReadings } from '../domain/names/readings';
import type { MatcherMetrics } from './metrics';

export interface MatcherDeps {
  /** Plain SQL for the deposit decision, the hot path; Prisma (on the same pool) for the rest. */
  database: Database;
  prisma: PrismaClient;
  lock: RedisLock;
  clock: Clock;
  logger: Logger;
  publicBaseUrl: string;
  lockTtlMs: number;
  lockWaitMs: number;
  /** The readings of kanji names (a name dictionary), loaded at start-up. */
  readings: NameReadings;
  /** Absent in tests that do not read metrics. */
  metrics?: MatcherMetrics;
}

/** A decision made on data that changed underneath is made again, this often at most. */
export const MAX_ATTEMPTS = 3;

/**
 * Runs `work` under the bank account's lock, again if the database found it stale. The lock makes
 * decisions on one account one at a time; the conditional writes inside `work` make them safe.
 */
export async function underAccountLock<T>(deps: MatcherDeps, bankAccountId: string, work: () => Promise<T>): Promise<T> {
  const askedAt = performance.now();
  return deps.lock.withLock(`account:${bankAccountId}`, { ttlMs: deps.lockTtlMs, waitMs: deps.lockWaitMs }, async () => {
    deps.metrics?.lockWaited((performance.now() - askedAt) / 1000);
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        const stale = error instanceof StaleDecisionError || isUniqueViolation(error);
        if (!stale || attempt >= MAX_ATTEMPTS) throw error;
        deps.logger.warn({ err: error, bankAccountId, attempt }, 'decision was stale; deciding again');
      }
    }
  });
}
