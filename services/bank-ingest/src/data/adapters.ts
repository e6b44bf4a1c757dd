import type { AccountType, Mode } from '@pmatch/contracts';
import type { BankAccountRow, PrismaClient } from '@pmatch/db';
import type { AccountReference, Adapter, BoundAccount } from '../domain/adapter-auth';

/**
 * How long the adapters read are trusted before they are read again: a revoked adapter, or an
 * account unbound from one, is refused by every replica at most this long after the change.
 */
export const ADAPTERS_TTL_MS = 1_000;
/** A request naming an adapter id not cached re-reads the adapters at most this often. */
export const ADAPTERS_MISS_REFRESH_MS = 1_000;

/** An active adapter as stored: its sealed secret and its bound accounts. */
export interface SealedAdapter {
  id: string;
  secretEncrypted: string;
  accounts: BoundAccount[];
}

export async function listActiveAdapters(prisma: PrismaClient): Promise<SealedAdapter[]> {
  const rows = await prisma.bankAdapter.findMany({
    where: { revokedAt: null },
    select: { id: true, secretEncrypted: true, accounts: { select: { bankAccount: true } } },
  });
  return rows.map((row) => ({
    id: row.id,
    secretEncrypted: row.secretEncrypted,
    accounts: row.accounts.map(({ bankAccount }) => boundAccountOf(bankAccount)),
  }));
}

/**
 * The account the reference names if the (active) adapter is bound to it now: read at once, for
 * a binding made after the cached adapters were read. Only an adapter whose signature verified
 * gets here, so strangers cannot make requests cost this read.
 */
export async function readBoundAccount(prisma: PrismaClient, adapterId: string, reference: AccountReference): Promise<BoundAccount | undefined> {
  const account =
    'bankAccountId' in reference
      ? { id: reference.bankAccountId }
      : {
          bankCode: reference.identity.bank_code,
          branchCode: reference.identity.branch_code,
          accountType: reference.identity.account_type,
          accountNumber: reference.identity.account_number,
        };
  const bindings = await prisma.bankAdapterAccount.findMany({
    where: { adapterId, adapter: { revokedAt: null }, bankAccount: account },
    select: { bankAccount: true },
    take: 2,
  });
  // Two bound accounts of one identity cannot be told apart; ops refuses to bind such a pair.
  return bindings.length === 1 ? boundAccountOf(bindings[0]!.bankAccount) : undefined;
}

function boundAccountOf(a: BankAccountRow): BoundAccount {
  return {
    id: a.id,
    organisationId: a.organisationId,
    mode: a.mode as Mode,
    bankCode: a.bankCode,
    branchCode: a.branchCode,
    accountType: a.accountType as AccountType,
    accountNumber: a.accountNumber,
  };
}

export interface AdapterCacheOptions {
  ttlMs: number;
  missRefreshMs: number;
  /** The service's clock, in milliseconds. */
  now: () => number;
  /** A sealed secret that does not open: that adapter is left out, the others work. */
  onUnopenable?: (adapterId: string, error: unknown) => void;
}

/**
 * The active adapters, secrets opened and accounts bound, kept in memory so that a badly signed
 * request costs no read or decryption: read again once older than `ttlMs` (from when its read
 * began), or at a request naming an adapter not cached, at most once per `missRefreshMs`. A re-read
 * opens only new secrets; concurrent reads share one query (docs/decisions/0035-adapters-bound-to-accounts.md).
 */
export class AdapterCache {
  private adapters: Adapter[] = [];
  /** Opened secrets by row and sealed text (`openedKey`): a secret copied into another row is opened there anew. */
  private opened = new Map<string, string>();
  /** Sealed secrets that did not open for their row: reported once, not tried again. */
  private readonly unopenable = new Set<string>();
  private readStartedAt: number | undefined;
  private loading: Promise<Adapter[]> | undefined;

  constructor(
    private readonly list: () => Promise<SealedAdapter[]>,
    /** Opens an adapter's sealed secret: it opens only for the row it was sealed for. */
    private readonly open: (sealed: string, adapterId: string) => string,
    private readonly options: AdapterCacheOptions,
  ) {}

  /** The adapters to verify a request with: the cached ones while they are fresh. */
  async current(): Promise<Adapter[]> {
    if (this.readStartedAt === undefined || this.options.now() - this.readStartedAt > this.options.ttlMs) return this.reload();
    return this.adapters;
  }

  /**
   * The active adapter with this id, or undefined. An id not among the cached ones makes the
   * adapters be read again (at most once per `missRefreshMs`), so a freshly created adapter works
   * without waiting out the cache, and naming unknown ids costs at most one read per interval.
   */
  async named(id: string): Promise<Adapter | undefined> {
    const cached = (await this.current()).find((adapter) => adapter.id === id);
    if (cached !== undefined) return cached;
    return (await this.afterMiss())?.find((adapter) => adapter.id === id);
  }

  /**
   * After no secret verified a request: freshly read adapters if the last read is older than
   * `missRefreshMs`, otherwise undefined (nothing new to try).
   */
  async afterMiss(): Promise<Adapter[] | undefined> {
    if (this.loading !== undefined) return this.loading;
    if (this.readStartedAt !== undefined && this.options.now() - this.readStartedAt < this.options.missRefreshMs) return undefined;
    return this.reload();
  }

  private reload(): Promise<Adapter[]> {
    this.loading ??= this.read().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async read(): Promise<Adapter[]> {
    const startedAt = this.options.now();
    const rows = await this.list();
    const opened = new Map<string, string>();
    const adapters: Adapter[] = [];
    for (const row of rows) {
      const secret = this.opened.get(openedKey(row)) ?? this.tryOpen(row);
      if (secret === undefined) continue;
      opened.set(openedKey(row), secret);
      adapters.push({ id: row.id, secret, accounts: row.accounts });
    }
    this.opened = opened;
    this.adapters = adapters;
    this.readStartedAt = startedAt;
    return adapters;
  }

  private tryOpen(row: SealedAdapter): string | undefined {
    if (this.unopenable.has(openedKey(row))) return undefined;
    try {
      return this.open(row.secretEncrypted, row.id);
    } catch (error) {
      this.unopenable.add(openedKey(row));
      this.options.onUnopenable?.(row.id, error);
      return undefined;
    }
  }
}

/** A sealed secret opens only for its own row, so what was opened is remembered per row. */
function openedKey(row: SealedAdapter): string {
  return `${row.id}\n${row.secretEncrypted}`;
}
