import type { PrismaClient } from '@pmatch/db';
import type { AdapterSecret } from '../domain/adapter-auth';

/** How long the opened adapter secrets are trusted before they are read again (a revoked adapter works this long at most). */
export const ADAPTER_SECRETS_TTL_MS = 30_000;
/** A notification no cached secret verifies re-reads the secrets at most this often. */
export const ADAPTER_SECRETS_MISS_REFRESH_MS = 1_000;

export interface SealedAdapterSecret {
  id: string;
  secretEncrypted: string;
}

export async function listActiveAdapterSecrets(prisma: PrismaClient): Promise<SealedAdapterSecret[]> {
  return prisma.bankAdapter.findMany({ where: { revokedAt: null }, select: { id: true, secretEncrypted: true } });
}

/**
 * The active adapters' secrets, opened, kept in memory. Every notification is verified against
 * them, so reading and decrypting them per request would let anyone sending badly signed
 * notifications make each request cost a database read and a decryption per adapter. Instead:
 * the list is read again when it is older than `ttlMs`, and a notification that no cached secret
 * verifies (perhaps signed by an adapter created a moment ago) may ask for a re-read, granted at
 * most once per `missRefreshMs`; the rest of such notifications are answered from the cache.
 * A re-read opens only secrets it has not opened before; concurrent reads share one query.
 */
export class AdapterSecretCache {
  private adapters: AdapterSecret[] = [];
  private opened = new Map<string, string>();
  private loadedAt: number | undefined;
  private loading: Promise<AdapterSecret[]> | undefined;

  constructor(
    private readonly list: () => Promise<SealedAdapterSecret[]>,
    private readonly open: (sealed: string) => string,
    private readonly options: { ttlMs: number; missRefreshMs: number; now?: () => number },
  ) {}

  /** The secrets to verify a notification with: the cached ones while they are fresh. */
  async current(): Promise<AdapterSecret[]> {
    if (this.loadedAt === undefined || this.now() - this.loadedAt > this.options.ttlMs) return this.reload();
    return this.adapters;
  }

  /**
   * After no secret verified a notification: freshly read secrets if the last read is older than
   * `missRefreshMs`, otherwise undefined (nothing new to try).
   */
  async afterMiss(): Promise<AdapterSecret[] | undefined> {
    if (this.loading !== undefined) return this.loading;
    if (this.loadedAt !== undefined && this.now() - this.loadedAt < this.options.missRefreshMs) return undefined;
    return this.reload();
  }

  private reload(): Promise<AdapterSecret[]> {
    this.loading ??= this.read().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async read(): Promise<AdapterSecret[]> {
    const rows = await this.list();
    const opened = new Map<string, string>();
    for (const row of rows) opened.set(row.secretEncrypted, this.opened.get(row.secretEncrypted) ?? this.open(row.secretEncrypted));
    this.opened = opened;
    this.adapters = rows.map((row) => ({ id: row.id, secret: opened.get(row.secretEncrypted)! }));
    this.loadedAt = this.now();
    return this.adapters;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
