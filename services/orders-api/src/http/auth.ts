import { AppError } from '@pmatch/contracts';
import { modeOf, type Sql } from '@pmatch/db';
import { sha256Hex } from '@pmatch/platform';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { WRITE_METHODS, bearerKey, type AuthContext } from '../domain/auth';
import { findActiveKeyByHash } from '../data/keys';

declare global {
  namespace Express {
    interface Request {
      auth?: AuthContext;
    }
  }
}

/**
 * Resolves the API key. Keys are stored only as SHA-256 hashes, so a lookup by hash is the
 * comparison; an unknown, malformed and revoked key all answer the same 401.
 */
export function authenticate(sql: Sql): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const key = bearerKey(req.get('authorization'));
    if (key === undefined) {
      throw new AppError('invalid_api_key', 'Missing or malformed API key. Send Authorization: Bearer svc_test_… or svc_live_….');
    }
    const row = await findActiveKeyByHash(sql, sha256Hex(key));
    if (row === null) throw new AppError('invalid_api_key', 'Invalid API key: it is unknown or has been revoked.');
    req.auth = {
      keyId: row.id,
      organisationId: row.organisationId,
      mode: modeOf(row),
      permission: row.permission === 'read_only' ? 'read_only' : 'read_write',
      bankAccountId: row.bankAccountId,
      accountIds: row.accountIds,
    };
    if (WRITE_METHODS.has(req.method) && req.auth.permission !== 'read_write') {
      throw new AppError('insufficient_scope', 'This API key is read-only; use a read-write key for this request.');
    }
    next();
  };
}

export function authOf(req: Request): AuthContext {
  if (req.auth === undefined) throw new Error('route mounted without authenticate()');
  return req.auth;
}
