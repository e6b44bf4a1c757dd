import { AppError, UpdateSettingsRequest } from '@pmatch/contracts';
import { settingsView, type PrismaClient } from '@pmatch/db';
import { parseInput, type Clock } from '@pmatch/platform';
import { Router } from 'express';
import { readSettings, updateSettings } from '../data/settings';
import { authOf } from './auth';

export function settingsRouter(deps: { prisma: PrismaClient; clock: Clock }): Router {
  const router = Router();
  router.get('/v1/settings', async (req, res) => {
    const auth = authOf(req);
    res.json(settingsView(await readSettings(deps.prisma, auth.organisationId, auth.mode)));
  });
  router.patch('/v1/settings', async (req, res) => {
    const auth = authOf(req);
    // Settings hold for every account of the organisation's mode; a key limited to one account
    // must not change how deposits into the others are matched.
    if (auth.bankAccountId !== null) {
      throw new AppError(
        'insufficient_scope',
        'This API key is limited to one bank account, and settings apply to every account of the organisation; change them with a key that is not limited to an account.',
      );
    }
    const change = parseInput(UpdateSettingsRequest, req.body);
    res.json(settingsView(await updateSettings(deps.prisma, auth.organisationId, auth.mode, change, deps.clock.now())));
  });
  return router;
}
