import { Router } from 'express';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { changeUserRole, getTeam, inviteUser, removeTeamMember } from '../../use-cases/manage-team';
import { redirectDone, sendScreen } from '../render';
import { auditContextOf, contextOf, field, pathId, requireRole, signedInOf } from '../request';
import { TeamScreen } from '../screens/team';

/** The organisation's people; admins invite them, change their roles and remove them. */
export function teamRoutes(deps: OrdersApiDeps): Router {
  const router = Router();

  router.get('/dashboard/team', async (req, res) => {
    sendScreen(res, TeamScreen, { ctx: contextOf(req), users: await getTeam(deps, signedInOf(req).actor.organisationId) });
  });

  // The setup link exists only in this answer: it is stored as a hash.
  router.post('/dashboard/team', requireRole('admin'), async (req, res) => {
    const { organisationId } = signedInOf(req).actor;
    const { setupUrl } = await inviteUser(deps, organisationId, { email: field(req, 'email') ?? '', role: field(req, 'role') }, auditContextOf(req));
    sendScreen(res, TeamScreen, { ctx: contextOf(req), users: await getTeam(deps, organisationId), invited: setupUrl }, 201);
  });

  router.post('/dashboard/team/:id/role', requireRole('admin'), async (req, res) => {
    await changeUserRole(deps, signedInOf(req).actor.organisationId, pathId(req), field(req, 'role'), auditContextOf(req));
    redirectDone(res, '/dashboard/team', 'changed');
  });

  router.post('/dashboard/team/:id/remove', requireRole('admin'), async (req, res) => {
    await removeTeamMember(deps, signedInOf(req).actor.organisationId, pathId(req), auditContextOf(req));
    redirectDone(res, '/dashboard/team', 'removed');
  });

  return router;
}
