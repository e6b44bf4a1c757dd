import { Router } from 'express';
import type { ConsoleAppDeps } from '../../use-cases/console-login';
import { accountRoutes } from './account';
import { apiKeyRoutes } from './api-keys';
import { dedicatedAccountRoutes } from './dedicated-accounts';
import { depositRoutes } from './deposits';
import { orderRoutes } from './orders';
import { overviewRoutes } from './overview';
import { payerAliasRoutes } from './payer-aliases';
import { settingsRoutes } from './settings';
import { teamRoutes } from './team';
import { webhookRoutes } from './webhooks';

/**
 * Every screen behind the log-in. Each route reads the form and the session, calls one use case
 * (which writes the action's audit row in the action's transaction) and answers a POST with a
 * redirect; a route whose action needs a role checks it first (`requireRole`).
 */
export function signedInRoutes(deps: ConsoleAppDeps): Router {
  const router = Router();
  for (const routes of [
    overviewRoutes,
    depositRoutes,
    payerAliasRoutes,
    orderRoutes,
    webhookRoutes,
    apiKeyRoutes,
    settingsRoutes,
    dedicatedAccountRoutes,
    teamRoutes,
    accountRoutes,
  ]) {
    router.use(routes(deps));
  }
  return router;
}
