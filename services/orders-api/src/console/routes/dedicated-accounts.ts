import { Router, type Request, type Response } from 'express';
import { DEDICATED_ACCOUNTS_FORM_FIELDS, readDedicatedAccountsForm, type DedicatedAccountsForm } from '../../domain/dedicated-accounts';
import type { ConsoleAppDeps } from '../../use-cases/console-login';
import { addDedicatedAccounts, getDedicatedPool } from '../../use-cases/manage-dedicated-accounts';
import { redirectDone, sendScreen } from '../render';
import { reentryRefusal } from '../reentry';
import { ConsoleRefusal, auditContextOf, contextOf, field, requireRole, signedInOf } from '../request';
import { ConfirmDedicatedAccountsScreen, DedicatedAccountsScreen, type DedicatedAccountsRefusal } from '../screens/dedicated-accounts';

const PAGE = '/dashboard/settings/dedicated-accounts';

const formOf = (req: Request): DedicatedAccountsForm =>
  Object.fromEntries(DEDICATED_ACCOUNTS_FORM_FIELDS.map((name) => [name, field(req, name) ?? ''])) as unknown as DedicatedAccountsForm;

/** Accounts are added in live mode only: test mode's pool is fixed. */
function assertLive(req: Request): void {
  if (signedInOf(req).mode !== 'live') throw new ConsoleRefusal(404, 'dedicated accounts are added in live mode');
}

/**
 * The dedicated transfer accounts of the mode, and (admins, live mode) adding some: the form, a
 * confirmation that asks for the password again, then one audited transaction that adds them all.
 */
export function dedicatedAccountRoutes(deps: ConsoleAppDeps): Router {
  const router = Router();

  /** The page, with a refused form's reason and what was typed. */
  const sendPage = async (req: Request, res: Response, refused?: { form: DedicatedAccountsForm; why: DedicatedAccountsRefusal; status: number }) => {
    const pool = await getDedicatedPool(deps, signedInOf(req).actor);
    sendScreen(res, DedicatedAccountsScreen, { ctx: contextOf(req), pool, form: refused?.form, refused: refused?.why }, refused?.status ?? 200);
  };

  router.get(PAGE, async (req, res) => {
    await sendPage(req, res);
  });

  // The confirmation is this POST's answer; only its own form adds anything.
  router.post(`${PAGE}/confirm`, requireRole('admin'), async (req, res) => {
    assertLive(req);
    const form = formOf(req);
    const read = readDedicatedAccountsForm(form);
    if (!read.ok) return sendPage(req, res, { form, why: { problems: read.problems }, status: 400 });
    sendScreen(res, ConfirmDedicatedAccountsScreen, { ctx: contextOf(req), form, addition: read.addition });
  });

  router.post(PAGE, requireRole('admin'), async (req, res) => {
    assertLive(req);
    const form = formOf(req);
    const read = readDedicatedAccountsForm(form);
    if (!read.ok) return sendPage(req, res, { form, why: { problems: read.problems }, status: 400 });
    const added = await addDedicatedAccounts(deps, deps.throttles.reentry, auditContextOf(req), read.addition, field(req, 'password') ?? '');
    if (added.outcome === 'done') return redirectDone(res, PAGE, 'added', { count: String(added.added) });
    if (added.outcome === 'already_registered') {
      return sendPage(req, res, { form, why: { alreadyRegistered: added.accountNumbers }, status: 409 });
    }
    const refusal = reentryRefusal(contextOf(req).t, added.outcome, 'password');
    sendScreen(res, ConfirmDedicatedAccountsScreen, { ctx: contextOf(req), form, addition: read.addition, problem: refusal.message }, refusal.status);
  });

  return router;
}
