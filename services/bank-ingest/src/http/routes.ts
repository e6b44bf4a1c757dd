import { Router } from 'express';
import { notificationsRouter, type NotificationDeps } from './notifications';
import { statementsRouter, type StatementDeps } from './statements';

export type IngestDeps = NotificationDeps & StatementDeps;

/** Every public route of bank-ingest; each parses its own body (JSON, or a statement file as a stream). */
export function ingestRoutes(deps: IngestDeps): Router {
  const router = Router();
  router.use(notificationsRouter(deps));
  router.use(statementsRouter(deps));
  return router;
}
