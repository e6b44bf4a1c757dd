import { createDatabase, createPrisma, type Database, type PrismaClient } from '@pmatch/db';
import { createTestDatabase, type TestDatabase } from './infra';
import { DATABASE_ROLE, databaseUrlAs } from './system';

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

/** A test file's database as its owner sees it and as one service's database role does. */
export interface ServiceTestDatabase {
  db: TestDatabase;
  /** Prisma as the database's owner: for seeding and reading what the role may not. */
  owner: PrismaClient;
  /** The service's own connections, in its role. */
  database: Database;
}

/**
 * Gives the calling test file its own database, opened before its tests as its owner and as
 * `role`'s service (then handed to `onOpen`), closed and dropped after them.
 */
export function useServiceTestDatabase(
  role: keyof typeof DATABASE_ROLE,
  onOpen: (opened: ServiceTestDatabase) => Promise<void> | void,
  options?: { poolSize?: number },
): void {
  let opened: ServiceTestDatabase | undefined;
  beforeAll(async () => {
    const db = await createTestDatabase();
    opened = { db, owner: createPrisma(db.url), database: createDatabase(databaseUrlAs(db.url, DATABASE_ROLE[role]), options) };
    await onOpen(opened);
  });
  afterAll(async () => {
    await opened?.database.prisma.$disconnect();
    await opened?.owner.$disconnect();
    await opened?.db.drop();
  });
}
