import { UpdateSettingsRequest } from '@pmatch/contracts';
import { parseInput } from '@pmatch/platform';
import { Router } from 'express';
import type { OrdersApiDeps } from '../use-cases/deps';
import { assertMayChangeSettings, changeSettings, getSettings } from '../use-cases/manage-settings';
import { actorOf } from './api-key-auth';

export function settingsRouter(deps: OrdersApiDeps): Router {
  const router = Router();
  router.get('/v1/settings', async (req, res) => {
    res.json(await getSettings(deps, actorOf(req)));
  });
  router.patch('/v1/settings', async (req, res) => {
    const actor = actorOf(req);
    // Refused before the body is judged.
    assertMayChangeSettings(actor);
    res.json(await changeSettings(deps, actor, parseInput(UpdateSettingsRequest, req.body)));
  });
  return router;
}
