import { findUserOfOrganisation } from '../data/users';
import { verifyPassword } from '../domain/passwords';
import type { OrdersApiDeps } from './deps';

/** Whether the person typed their own password again (before a secret is shown or reissued). */
export async function passwordConfirmed(
  deps: Pick<OrdersApiDeps, 'database'>,
  person: { organisationId: string; userId: string },
  password: string,
): Promise<boolean> {
  const user = await findUserOfOrganisation(deps.database.prisma, person.organisationId, person.userId);
  return user?.passwordHash != null && (await verifyPassword(password, user.passwordHash));
}
