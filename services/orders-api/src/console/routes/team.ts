import type { UserRow } from '@pmatch/db';
import { Router, type Request, type Response } from 'express';
import type { ConsoleAppDeps } from '../../use-cases/console-login';
import { AppError } from '@pmatch/contracts';
import { LastAdminRefusal, changeUserRole, getTeam, inviteUser, removeTeamMember, resetAccess } from '../../use-cases/manage-team';
import { takeShownOnce } from '../../use-cases/shown-once';
import { redirectDone, sendScreen } from '../render';
import { ConsoleRefusal, auditContextOf, contextOf, field, pathId, requireRole, showToOf, signedInOf } from '../request';
import { RemoveMemberScreen, ResetAccessScreen, ResetLinkScreen, TeamScreen, type TeamProblems } from '../screens/team';

/**
 * The organisation's people; admins invite them (by e-mail), change their roles, reset their access
 * (asked first; the new link shown once) and remove them (asked first).
 */
export function teamRoutes(deps: ConsoleAppDeps): Router {
  const router = Router();

  /** The team page, with what a refused action on it says. */
  const sendTeam = async (req: Request, res: Response, shown: TeamProblems = {}, status = 200) =>
    sendScreen(res, TeamScreen, { ctx: contextOf(req), users: await getTeam(deps, signedInOf(req).actor.organisationId), ...shown }, status);

  router.get('/dashboard/team', async (req, res) => {
    await sendTeam(req, res);
  });

  // The invitation's link goes to the address only: the answer is the same for any address not already of this organisation.
  router.post('/dashboard/team', requireRole('admin'), async (req, res) => {
    const entered = { email: field(req, 'email') ?? '', role: field(req, 'role') };
    let invited: { email: string };
    try {
      invited = await inviteUser(deps, signedInOf(req).actor.organisationId, entered, auditContextOf(req));
    } catch (error) {
      // A refused invitation comes back on its own form, with what was entered.
      if (!(error instanceof AppError && error.code === 'parameter_invalid')) throw error;
      return sendTeam(req, res, { inviteProblem: contextOf(req).t.team.inviteInvalid, entered }, 400);
    }
    redirectDone(res, '/dashboard/team', 'invited', { email: invited.email });
  });

  router.post('/dashboard/team/:id/role', requireRole('admin'), async (req, res) => {
    try {
      await changeUserRole(deps, signedInOf(req).actor.organisationId, pathId(req), field(req, 'role'), auditContextOf(req));
    } catch (error) {
      if (!(error instanceof LastAdminRefusal)) throw error;
      return sendTeam(req, res, { problem: contextOf(req).t.team.lastAdmin }, 400);
    }
    redirectDone(res, '/dashboard/team', 'changed');
  });

  router.get('/dashboard/team/:id/remove', requireRole('admin'), async (req, res) => {
    sendScreen(res, RemoveMemberScreen, { ctx: contextOf(req), user: await memberOf(deps, req) });
  });

  router.post('/dashboard/team/:id/remove', requireRole('admin'), async (req, res) => {
    try {
      await removeTeamMember(deps, signedInOf(req).actor.organisationId, pathId(req), auditContextOf(req));
    } catch (error) {
      if (!(error instanceof LastAdminRefusal)) throw error;
      return sendTeam(req, res, { problem: contextOf(req).t.team.lastAdmin }, 400);
    }
    redirectDone(res, '/dashboard/team', 'removed');
  });

  router.get('/dashboard/team/:id/reset', requireRole('admin'), async (req, res) => {
    sendScreen(res, ResetAccessScreen, { ctx: contextOf(req), user: await memberOf(deps, req) });
  });

  router.post('/dashboard/team/:id/reset', requireRole('admin'), async (req, res) => {
    const reset = await resetAccess(deps, deps.throttles.login, pathId(req), auditContextOf(req), showToOf(req));
    if (reset.outcome === 'invitation_sent') return redirectDone(res, '/dashboard/team', 'invited_again', { email: (await memberOf(deps, req)).email });
    res.redirect(303, `/dashboard/team/reset-link/${reset.displayId}`);
  });

  // The new link exists in clear only in this answer, once: a reload finds it gone.
  router.get('/dashboard/team/reset-link/:id', requireRole('admin'), async (req, res) => {
    const shown = await takeShownOnce(deps, showToOf(req), 'setup_link', pathId(req));
    sendScreen(res, ResetLinkScreen, { ctx: contextOf(req), shown }, shown === undefined ? 410 : 200);
  });

  return router;
}

/** The person of the path, of the asking admin's organisation, or the 404. */
async function memberOf(deps: ConsoleAppDeps, req: Request): Promise<UserRow> {
  const user = (await getTeam(deps, signedInOf(req).actor.organisationId)).find((u) => u.id === pathId(req));
  if (user === undefined) throw new ConsoleRefusal(404, 'no such member');
  return user;
}
