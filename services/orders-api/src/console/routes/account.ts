import { Router, type Request, type Response } from 'express';
import type { UserRow } from '@pmatch/db';
import type { ConsoleAppDeps } from '../../use-cases/console-login';
import {
  confirmSecondFactorSetup,
  enrolmentOf,
  findPerson,
  recoveryCodesLeft,
  replaceRecoveryCodesOf,
  startSecondFactorSetup,
  turnOffSecondFactor,
} from '../../use-cases/manage-second-factor';
import { takeShownOnce } from '../../use-cases/shown-once';
import { qrImage } from '../qr';
import { redirectDone, sendScreen } from '../render';
import { reentryRefusal } from '../reentry';
import { auditContextOf, contextOf, field, pathId, showToOf, signedInOf } from '../request';
import { AccountScreen, RecoveryCodesScreen } from '../screens/account';

/**
 * The person's own second factor: set up after the password again (a QR code, then a code to prove
 * it, then recovery codes shown once), turned off or its recovery codes replaced after a code again.
 */
export function accountRoutes(deps: ConsoleAppDeps): Router {
  const router = Router();
  const { reentry } = deps.throttles;

  router.get('/dashboard/account', async (req, res) => {
    await sendAccount(deps, req, res, await findPerson(deps, signedInOf(req).actor));
  });

  router.post('/dashboard/account/totp/start', async (req, res) => {
    const user = await findPerson(deps, signedInOf(req).actor);
    const started = await startSecondFactorSetup(deps, reentry, auditContextOf(req), user, field(req, 'password') ?? '');
    if (started.outcome === 'done' || started.outcome === 'on_already') return res.redirect(303, '/dashboard/account');
    const refusal = reentryRefusal(contextOf(req).t, started.outcome, 'password');
    await sendAccount(deps, req, res, user, refusal.message, refusal.status);
  });

  router.post('/dashboard/account/totp/confirm', async (req, res) => {
    const user = await findPerson(deps, signedInOf(req).actor);
    const confirmed = await confirmSecondFactorSetup(deps, user, field(req, 'code') ?? '', auditContextOf(req), showToOf(req));
    if (confirmed.outcome === 'enabled') return res.redirect(303, `/dashboard/account/recovery-codes/${confirmed.displayId}`);
    if (confirmed.outcome === 'not_started') return res.redirect(303, '/dashboard/account');
    await sendAccount(deps, req, res, user, contextOf(req).t.login.codeWrong, 400);
  });

  router.post('/dashboard/account/totp/disable', async (req, res) => {
    const signedIn = signedInOf(req);
    const user = await findPerson(deps, signedIn.actor);
    const turnedOff = await turnOffSecondFactor(deps, reentry, auditContextOf(req), user, field(req, 'code') ?? '', signedIn.token);
    if (turnedOff.outcome === 'done') return redirectDone(res, '/dashboard/account', 'disabled');
    const refusal = reentryRefusal(contextOf(req).t, turnedOff.outcome, 'code');
    await sendAccount(deps, req, res, user, refusal.message, refusal.status);
  });

  router.post('/dashboard/account/recovery-codes', async (req, res) => {
    const user = await findPerson(deps, signedInOf(req).actor);
    const replaced = await replaceRecoveryCodesOf(deps, reentry, auditContextOf(req), user, field(req, 'code') ?? '', showToOf(req));
    if (replaced.outcome === 'done') return res.redirect(303, `/dashboard/account/recovery-codes/${replaced.displayId}`);
    const refusal = reentryRefusal(contextOf(req).t, replaced.outcome, 'code');
    await sendAccount(deps, req, res, user, refusal.message, refusal.status);
  });

  // The codes exist in clear only in this answer, once: a reload finds them gone.
  router.get('/dashboard/account/recovery-codes/:id', async (req, res) => {
    const shown = await takeShownOnce(deps, showToOf(req), 'recovery_codes', pathId(req));
    sendScreen(res, RecoveryCodesScreen, { ctx: contextOf(req), shown }, shown === undefined ? 410 : 200);
  });

  return router;
}

/** The account page as it stands for `user`, with the QR code of a second factor being set up. */
async function sendAccount(deps: ConsoleAppDeps, req: Request, res: Response, user: UserRow, problem?: string, status = 200): Promise<void> {
  const enrolment = enrolmentOf(deps, user);
  const enrolling = enrolment === undefined ? undefined : { ...enrolment, qr: await qrImage(enrolment.uri) };
  const left = user.totpEnabledAt === null ? 0 : await recoveryCodesLeft(deps, user);
  sendScreen(res, AccountScreen, { ctx: contextOf(req), user, enrolling, recoveryCodesLeft: left, problem }, status);
}
