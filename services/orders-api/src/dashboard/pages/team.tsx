import { USER_ROLES } from '@pmatch/contracts';
import type { UserRow } from '@pmatch/db';
import { Router } from 'express';
import { recordAudit } from '../../use-cases/audit';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { changeUserRole, getTeam, inviteUser, removeTeamMember } from '../../use-cases/manage-team';
import { tokyoTime } from '../format';
import { auditContextOf, contextOf, field, pathId, requireRole, signedInOf, type ConsoleRequestContext } from '../http';
import { redirectDone, sendPage } from '../render';
import { ActionButton, Layout, Notice, PostForm, Table, CopyableSecret } from '../views/layout';

/** The organisation's people; admins invite them, change their roles and remove them. */
export function teamPages(deps: OrdersApiDeps): Router {
  const router = Router();

  router.get('/dashboard/team', async (req, res) => {
    const { actor } = signedInOf(req);
    sendPage(res, <TeamPage ctx={contextOf(req)} users={await getTeam(deps, actor.organisationId)} />);
  });

  router.post('/dashboard/team', requireRole('admin'), async (req, res) => {
    const { actor } = signedInOf(req);
    const { user, setupUrl } = await inviteUser(deps, actor.organisationId, { email: field(req, 'email') ?? '', role: field(req, 'role') });
    await recordAudit(deps, { ...auditContextOf(req), mode: null }, 'user.invite', user.id, { email: user.email, role: user.role });
    sendPage(res, <TeamPage ctx={contextOf(req)} users={await getTeam(deps, actor.organisationId)} invited={setupUrl} />, 201);
  });

  router.post('/dashboard/team/:id/role', requireRole('admin'), async (req, res) => {
    const { actor } = signedInOf(req);
    const userId = pathId(req);
    const role = field(req, 'role');
    await changeUserRole(deps, actor.organisationId, userId, role);
    await recordAudit(deps, { ...auditContextOf(req), mode: null }, 'user.change_role', userId, { role });
    redirectDone(res, '/dashboard/team', 'changed');
  });

  router.post('/dashboard/team/:id/remove', requireRole('admin'), async (req, res) => {
    const { actor } = signedInOf(req);
    const userId = pathId(req);
    await removeTeamMember(deps, actor.organisationId, userId);
    await recordAudit(deps, { ...auditContextOf(req), mode: null }, 'user.remove', userId, {});
    redirectDone(res, '/dashboard/team', 'removed');
  });

  return router;
}

function TeamPage({ ctx, users, invited }: { ctx: ConsoleRequestContext; users: UserRow[]; invited?: string }) {
  const { t } = ctx;
  const tm = t.team;
  const me = ctx.signedIn!.actor;
  const admin = me.role === 'admin';
  const done = new URLSearchParams(ctx.query).get('done');
  return (
    <Layout ctx={ctx} title={tm.title} section="team">
      {done === 'removed' ? <Notice kind="success">{tm.removed}</Notice> : done === 'changed' ? <Notice kind="success">{t.common.done}</Notice> : null}
      {invited ? (
        <section aria-labelledby="invited">
          <h2 id="invited">{tm.invite}</h2>
          <p>{tm.invited}</p>
          <CopyableSecret ctx={ctx} id="setup-url">
            {invited}
          </CopyableSecret>
        </section>
      ) : null}
      <Table
        ctx={ctx}
        caption={tm.title}
        rows={users}
        columns={[
          { header: tm.email, cell: (user) => `${user.email} ${user.id === me.userId ? tm.you : ''}` },
          { header: tm.role, cell: (user) => t.roles[user.role] ?? user.role },
          { header: tm.passwordSet, cell: (user) => (user.passwordHash ? t.common.yes : tm.pending) },
          { header: tm.totp, cell: (user) => (user.totpEnabledAt ? t.common.yes : t.common.no) },
          { header: t.common.created, cell: (user) => tokyoTime(user.createdAt) },
          admin && { header: t.common.actions, class: 'actions', cell: (user) => <MemberActions ctx={ctx} user={user} /> },
        ]}
      />
      {admin ? <InviteForm ctx={ctx} /> : null}
    </Layout>
  );
}

/** An admin's controls for one member: a new role, or removal. */
function MemberActions({ ctx, user }: { ctx: ConsoleRequestContext; user: UserRow }) {
  const { t } = ctx;
  const tm = t.team;
  return (
    <>
      <PostForm ctx={ctx} action={`/dashboard/team/${user.id}/role`} class="form-grid">
        <label>
          {tm.changeRole}
          <select name="role" aria-label={`${tm.changeRole}: ${user.email}`}>
            {USER_ROLES.map((r) => (
              <option value={r} selected={user.role === r}>
                {t.roles[r]}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="secondary">
          {t.common.save}
        </button>
      </PostForm>
      <ActionButton ctx={ctx} action={`/dashboard/team/${user.id}/remove`} kind="danger" label={tm.remove} ariaLabel={`${tm.remove}: ${user.email}`} />
    </>
  );
}

/** The invitation form (admins): an e-mail address and a role, viewer unless chosen otherwise. */
function InviteForm({ ctx }: { ctx: ConsoleRequestContext }) {
  const { t } = ctx;
  const tm = t.team;
  return (
    <section aria-labelledby="invite">
      <h2 id="invite">{tm.invite}</h2>
      <PostForm ctx={ctx} action="/dashboard/team" class="form-grid">
        <label>
          {tm.email}
          <input type="email" name="email" required />
        </label>
        <label>
          {tm.role}
          <select name="role">
            {USER_ROLES.map((r) => (
              <option value={r} selected={r === 'viewer'}>
                {t.roles[r]}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">{tm.invite}</button>
      </PostForm>
    </section>
  );
}
