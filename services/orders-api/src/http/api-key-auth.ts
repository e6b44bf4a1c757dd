import { AppError } from '@pmatch/contracts';
import { modeOf, type Sql } from '@pmatch/db';
import { sha256Hex, systemClock, type Clock, type Logger } from '@pmatch/platform';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { Counter, type Registry } from 'prom-client';
import type { Actor } from '../domain/actor';
import { WRITE_METHODS, apiKeyActor, bearerKey, type ApiKeyAuth } from '../domain/api-key-auth';
import { findActiveKeyByHash, type ActiveKey } from '../data/keys';

declare global {
  namespace Express {
    interface Request {
      auth?: ApiKeyAuth;
    }
  }
}

/** Keys remembered at most; past it the one cached longest ago is dropped. */
const MAX_CACHED_KEYS = 10_000;

/** A key's `last_used_at` is written at most this often (per key and process), never awaited by a request. */
export const KEY_USE_RESOLUTION_MS = 60_000;

/**
 * The API keys, read by SHA-256 hash and remembered. Only a new order without an Idempotency-Key
 * may begin with a remembered key, because its write checks the key in the same statement; any
 * other answer to such a request is given from the key read again (`reauthenticateApiKey`,
 * `recheckCachedKey`). See docs/decisions/0012-cached-api-keys-checked-by-the-write.md.
 */
export class ApiKeys {
  private readonly cache = new Map<string, ActiveKey>();
  /** When this process last wrote each key's `last_used_at`. */
  private readonly usesNoted = new Map<string, number>();
  private readonly lookups: Counter<'source'>;

  constructor(
    private readonly sql: Sql,
    metrics: Registry,
    private readonly noteUse: (keyId: string, at: Date) => Promise<void> = async () => undefined,
    private readonly clock: Clock = systemClock,
    private readonly logger?: Logger,
  ) {
    this.lookups = new Counter({
      name: 'api_key_lookups_total',
      help: 'API keys looked up for requests, by where from: read from the database, or taken from the cache',
      labelNames: ['source'],
      registers: [metrics],
    });
  }

  /** The active key with this hash, read now (and remembered), or null when unknown or revoked. */
  async read(keyHash: string): Promise<ActiveKey | null> {
    this.lookups.inc({ source: 'database' });
    const key = await findActiveKeyByHash(this.sql, keyHash);
    this.cache.delete(keyHash);
    if (key === null) return null;
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(keyHash, key);
    return key;
  }

  /**
   * Records that the key was used, at most once a minute per key: the write is started, not waited
   * for, so a request never waits on it (docs/decisions/0012-cached-api-keys-checked-by-the-write.md
   * says why the hot path reads no more than it must); a failed write is only logged.
   */
  used(keyId: string): void {
    const now = this.clock.now();
    const last = this.usesNoted.get(keyId);
    if (last !== undefined && now.getTime() - last < KEY_USE_RESOLUTION_MS) return;
    this.usesNoted.delete(keyId);
    if (this.usesNoted.size >= MAX_CACHED_KEYS) this.usesNoted.delete(this.usesNoted.keys().next().value!);
    this.usesNoted.set(keyId, now.getTime());
    this.noteUse(keyId, now).catch((error: unknown) => this.logger?.warn({ err: error, keyId }, 'last use of an API key not recorded'));
  }

  /**
   * The key as this process last read it, if it did and the key may write. A read-only key is
   * refused every write, and a refusal is answered only from a key read for the request.
   */
  cachedWriter(keyHash: string): ActiveKey | undefined {
    const key = this.cache.get(keyHash);
    if (key?.permission !== 'read_write') return undefined;
    this.lookups.inc({ source: 'cache' });
    return key;
  }
}

/**
 * Resolves the API key; an unknown, malformed and revoked key all answer the same 401. The key is
 * read, unless `mayUseCache(req)` says the request's route checks a cached key itself.
 */
export function authenticateApiKey(keys: ApiKeys, mayUseCache: (req: Request) => boolean): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const text = bearerKey(req.get('authorization'));
    if (text === undefined) {
      throw new AppError('invalid_api_key', 'Missing or malformed API key. Send Authorization: Bearer svc_test_… or svc_live_….');
    }
    const keyHash = sha256Hex(text);
    const cached = mayUseCache(req) ? keys.cachedWriter(keyHash) : undefined;
    const key = cached ?? (await keys.read(keyHash));
    if (key === null) throw invalidKey();
    req.auth = authContext(key, keyHash, cached !== undefined);
    keys.used(key.id);
    if (WRITE_METHODS.has(req.method) && req.auth.permission !== 'read_write') {
      throw new AppError('insufficient_scope', 'This API key is read-only; use a read-write key for this request.');
    }
    next();
  };
}

/**
 * Reads the key of a request that began with a cached one, for its route to answer from a key read
 * now; a revoked key is 401.
 */
export async function reauthenticateApiKey(keys: ApiKeys, req: Request): Promise<ApiKeyAuth> {
  const keyHash = apiKeyAuthOf(req).keyHash;
  const key = await keys.read(keyHash);
  if (key === null) throw invalidKey();
  req.auth = authContext(key, keyHash, false);
  return req.auth;
}

/**
 * Before an error is answered to a request whose key came from the cache (a body that is not JSON,
 * a rate limit, a refusal of its route), reads the key: a key revoked meanwhile gets 401 instead,
 * as it would had the key been read first. If the read fails, the error is answered as it was.
 */
export function recheckCachedKey(keys: ApiKeys): ErrorRequestHandler {
  return (error: unknown, req: Request, _res: Response, next: NextFunction) => {
    if (req.auth?.cached !== true) return next(error);
    keys.read(req.auth.keyHash).then(
      (key) => next(key === null ? invalidKey() : error),
      () => next(error),
    );
  };
}

export function apiKeyAuthOf(req: Request): ApiKeyAuth {
  if (req.auth === undefined) throw new Error('route mounted without authenticateApiKey()');
  return req.auth;
}

/** Whom the use cases act for on this request: its API key. */
export function actorOf(req: Request): Actor {
  return apiKeyActor(apiKeyAuthOf(req));
}

function authContext(key: ActiveKey, keyHash: string, cached: boolean): ApiKeyAuth {
  return {
    keyId: key.id,
    organisationId: key.organisationId,
    mode: modeOf(key),
    permission: key.permission === 'read_only' ? 'read_only' : 'read_write',
    bankAccountId: key.bankAccountId,
    accountIds: key.accountIds,
    dedicatedAccountIds: key.dedicatedAccountIds,
    keyHash,
    cached,
  };
}

function invalidKey(): AppError {
  return new AppError('invalid_api_key', 'Invalid API key: it is unknown or has been revoked.');
}
