import type { PrismaClient } from '@pmatch/db';

/** The PostgreSQL role each process connects as (created by migration 20261122020000_service_roles). */
export const SERVICE_DATABASE_ROLES = {
  'orders-api': 'pmatch_orders_api',
  'bank-ingest': 'pmatch_bank_ingest',
  matcher: 'pmatch_matcher',
  'webhook-dispatcher': 'pmatch_webhook_dispatcher',
  ops: 'pmatch_ops',
} as const;
export type DatabaseRoleOwner = keyof typeof SERVICE_DATABASE_ROLES;

/** A production process connected as a role that is not its own: it must not start. */
export class WrongDatabaseRole extends Error {
  override name = 'WrongDatabaseRole';
}

interface RoleFacts {
  user: string;
  superuser: boolean;
  service_roles: string[];
  owns_schema: boolean;
}

/**
 * Refuses (WrongDatabaseRole) a connection whose user is a superuser, owns the schema (the
 * migrations' role), or is, or is a member of, another process's role; the user must be the
 * process's own role or a member of it. Production only: elsewhere tests and `npm start` may
 * connect as they like. docs/decisions/0068-services-refuse-roles-not-their-own.md
 */
export async function checkDatabaseRole(prisma: PrismaClient, owner: DatabaseRoleOwner): Promise<void> {
  const own = SERVICE_DATABASE_ROLES[owner];
  const [facts] = await prisma.$queryRaw<RoleFacts[]>`
    SELECT current_user::text AS user, r.rolsuper AS superuser,
      ARRAY(SELECT p.rolname::text FROM pg_roles p WHERE p.rolname = ANY (${Object.values(SERVICE_DATABASE_ROLES)}::text[])
              AND pg_has_role(current_user, p.oid, 'MEMBER') ORDER BY p.rolname) AS service_roles,
      EXISTS (SELECT FROM pg_class c WHERE c.relname = '_prisma_migrations' AND pg_has_role(current_user, c.relowner, 'MEMBER')) AS owns_schema
    FROM pg_roles r WHERE r.rolname = current_user`;
  if (facts === undefined) throw new WrongDatabaseRole(`${owner} could not read its own database role`);
  const fix = `connect as ${own} (DATABASE_URL), the role the migrations grant only what ${owner} needs`;
  if (facts.superuser) throw new WrongDatabaseRole(`${owner} refuses to run in production as the superuser ${facts.user}: ${fix}`);
  if (facts.owns_schema) throw new WrongDatabaseRole(`${owner} refuses to run in production as ${facts.user}, which owns the schema: ${fix}`);
  const others = facts.service_roles.filter((role) => role !== own);
  if (others.length > 0) {
    throw new WrongDatabaseRole(`${owner} refuses to run in production as ${facts.user}, which has the rights of ${others.join(', ')}: ${fix}`);
  }
  if (!facts.service_roles.includes(own)) throw new WrongDatabaseRole(`${owner} refuses to run in production as ${facts.user}, which is not ${own}: ${fix}`);
}
