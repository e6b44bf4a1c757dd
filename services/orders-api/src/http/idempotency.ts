import { AppError } from '@pmatch/contracts';
import type { PrismaClient } from '@pmatch/db';
import type { Clock, Logger } from '@pmatch/platform';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { IDEMPOTENCY_KEY_PATTERN, isReplayable, requestFingerprint } from '../domain/idempotency';
import { claimKey, completeKey, releaseKey } from '../data/idempotency';
import { authOf } from './auth';

/**
 * Idempotency-Key (spec endpoint rule 1): the first request with a key runs; a repeat with the same
 * body gets the stored answer with `Idempotent-Replayed: true`; another body is 400
 * idempotency_key_reused; a repeat while the first still runs is 409 idempotency_key_in_use.
 * The answer is stored before it is sent, so a retry after the answer always finds it.
 */
export function idempotency(deps: { prisma: PrismaClient; clock: Clock; logger: Logger }): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const key = req.get('idempotency-key');
    if (key === undefined) return next();
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new AppError('parameter_invalid', 'Idempotency-Key must be 1 to 255 printable ASCII characters.', { param: 'Idempotency-Key' });
    }
    const auth = authOf(req);
    const id = { organisationId: auth.organisationId, mode: auth.mode, key };
    const claim = await claimKey(deps.prisma, id, requestFingerprint(req.method, req.path, req.body), deps.clock.now());
    if (claim.state === 'reused') {
      throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used with a different request.', { param: 'Idempotency-Key' });
    }
    if (claim.state === 'in_progress') {
      throw new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry shortly.');
    }
    if (claim.state === 'completed') {
      res.setHeader('Idempotent-Replayed', 'true');
      res.status(claim.status).json(claim.body);
      return;
    }
    const send = res.json.bind(res);
    res.json = (body: unknown) => {
      const status = res.statusCode;
      const stored = isReplayable(status) ? completeKey(deps.prisma, id, status, body) : releaseKey(deps.prisma, id);
      stored.then(
        () => send(body),
        (error: unknown) => {
          deps.logger.error({ err: error }, 'could not store the idempotent response');
          send(body);
        },
      );
      return res;
    };
    next();
  };
}
