import { Router } from 'express';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { accountPages } from '../pages/account';
import { apiKeyPages } from '../pages/api-keys';
import { auditPages } from '../pages/audit';
import { depositPages } from '../pages/deposits';
import { eventPages } from '../pages/events';
import { orderPages } from '../pages/orders';
import { overviewPage } from '../pages/overview';
import { settingsPages } from '../pages/settings';
import { teamPages } from '../pages/team';
import { webhookPages } from '../pages/webhooks';

/** Every page behind the log-in; each checks the role an action needs before anything else. */
export function consolePages(deps: OrdersApiDeps): Router {
  const router = Router();
  for (const pages of [overviewPage, depositPages, orderPages, eventPages, webhookPages, apiKeyPages, settingsPages, teamPages, auditPages, accountPages]) {
    router.use(pages(deps));
  }
  return router;
}
