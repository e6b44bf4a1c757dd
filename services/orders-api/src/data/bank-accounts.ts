import type { BankAccountRow, PrismaClient } from '@pmatch/db';
import type { AuthContext } from '../domain/auth';

/** The bank accounts a key may see and use: its one scoped account, or every account of its mode. */
export async function accountsInScope(prisma: PrismaClient, auth: AuthContext): Promise<BankAccountRow[]> {
  return prisma.bankAccount.findMany({
    where: {
      organisationId: auth.organisationId,
      mode: auth.mode,
      ...(auth.bankAccountId === null ? {} : { id: auth.bankAccountId }),
    },
    orderBy: { createdAt: 'asc' },
  });
}
