import { MOUNT_PATH } from '@pmatch/platform';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * `handler` (a Router whose every route and middleware is at `prefix` or under it), entered only by
 * requests whose path is `prefix` or under it, compared without case as Express's routes compare;
 * any other request is passed on at once, without matching it against each of the Router's routes
 * (and, for a Router whose last layer is a Router, without the turn of the event loop it leaves in).
 * It names `prefix` as its MOUNT_PATH, so the service's served paths include it.
 */
export function underPath(prefix: string, handler: RequestHandler): RequestHandler {
  const mount = prefix.toLowerCase();
  const entered = (req: Request, res: Response, next: NextFunction) => {
    const path = req.path.toLowerCase();
    if (path === mount || path.startsWith(`${mount}/`)) return handler(req, res, next);
    next();
  };
  return Object.assign(entered, { [MOUNT_PATH]: prefix });
}
