import type { Database, PrismaClient } from '@pmatch/db';
import { REDIS_URL, useServiceTestDatabase, type TestDatabase } from '@pmatch/testkit';
import { Redis } from 'ioredis';

/** What a matcher test file works on: its own database and a Redis connection. */
export interface MatcherStores {
  db: TestDatabase;
  /** Prisma as the database's owner: for seeding what other services write, and reading it back. */
  prisma: PrismaClient;
  /** The matcher's own connections, in the matcher's database role. */
  database: Database;
  redis: Redis;
}

/** Opens the calling test file's stores before its tests (then hands them to `onOpen`) and closes them after. */
export function useMatcherStores(onOpen: (stores: MatcherStores) => Promise<void> | void): void {
  let redis: Redis | undefined;
  useServiceTestDatabase('matcher', async ({ db, owner, database }) => {
    redis = new Redis(REDIS_URL);
    await onOpen({ db, prisma: owner, database, redis });
  });
  afterAll(() => redis?.disconnect());
}
