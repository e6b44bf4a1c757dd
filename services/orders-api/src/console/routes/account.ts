import { Router } from 'express';
import { confirmSecondFactorSetup, enrolmentOf, findPerson, startSecondFactorSetup, turnOffSecondFactor } from '../../use-cases/manage-second-factor';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { redirectDone, sendScreen } from '../render';
import { auditContextOf, contextOf, field, signedInOf } from '../request';
import { AccountScreen } from '../screens/account';

/** The person's own second factor: set up (secret, then a code to prove it), or turned off with the password. */
export function accountRoutes(deps: OrdersApiDeps): Router {
  const router = Router();

  // While a second factor is being set up, the screen shows its secret to enrol.
  router.get('/dashboard/account', async (req, res) => {
    const user = await findPerson(deps, signedInOf(req).actor);
    const enrolling = enrolmentOf(deps, user);
    sendScreen(res, AccountScreen, { ctx: contextOf(req), user, ...(enrolling === undefined ? {} : { enrolling }) });
  });

  router.post('/dashboard/account/totp/start', async (req, res) => {
    await startSecondFactorSetup(deps, await findPerson(deps, signedInOf(req).actor));
    res.redirect(303, '/dashboard/account');
  });

  router.post('/dashboard/account/totp/confirm', async (req, res) => {
    const ctx = contextOf(req);
    const signedIn = signedInOf(req);
    const user = await findPerson(deps, signedIn.actor);
    const outcome = await confirmSecondFactorSetup(deps, user, field(req, 'code') ?? '', signedIn.token, auditContextOf(req));
    if (outcome === 'not_started') return res.redirect(303, '/dashboard/account');
    if (outcome === 'wrong_code') {
      return sendScreen(res, AccountScreen, { ctx, user, enrolling: enrolmentOf(deps, user)!, problem: ctx.t.login.codeWrong }, 400);
    }
    redirectDone(res, '/dashboard/account', 'enabled');
  });

  router.post('/dashboard/account/totp/disable', async (req, res) => {
    const ctx = contextOf(req);
    const user = await findPerson(deps, signedInOf(req).actor);
    if ((await turnOffSecondFactor(deps, user, field(req, 'password') ?? '', auditContextOf(req))) === 'wrong_password') {
      return sendScreen(res, AccountScreen, { ctx, user, problem: ctx.t.webhooks.wrongPassword }, 403);
    }
    redirectDone(res, '/dashboard/account', 'disabled');
  });

  return router;
}
