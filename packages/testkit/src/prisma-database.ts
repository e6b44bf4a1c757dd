import { createPrisma, type PrismaClient } from '@pmatch/db';
import { createTestDatabase, type TestDatabase } from './infra';

/** A test file's own database and a Prisma client on it; `close` disconnects, then drops the database. */
export interface PrismaTestDatabase {
  db: TestDatabase;
  prisma: PrismaClient;
  close(): Promise<void>;
}

export async function openPrismaTestDatabase(options?: { poolSize?: number }): Promise<PrismaTestDatabase> {
  const db = await createTestDatabase();
  const prisma = createPrisma(db.url, options);
  return {
    db,
    prisma,
    close: async () => {
      await prisma.$disconnect();
      await db.drop();
    },
  };
}

/** The error `work` rejects with; throws when it succeeds instead. */
export async function rejectionOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected the work to fail');
}

/**
 * Gives the calling test file its own database for all its tests: opened before them (then handed
 * to `onOpen`, which keeps what it needs) and closed after them.
 */
export function usePrismaTestDatabase(options: { poolSize?: number } | undefined, onOpen: (opened: PrismaTestDatabase) => void): void {
  let opened: PrismaTestDatabase | undefined;
  beforeAll(async () => {
    opened = await openPrismaTestDatabase(options);
    onOpen(opened);
  });
  afterAll(() => opened?.close());
}
