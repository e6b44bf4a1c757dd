import { AppError, newId } from '@pmatch/contracts';
import type { PrismaClient, Tx } from '@pmatch/db';
import { newSigningSecret, systemClock, type Clock, type SecretBox } from '@pmatch/platform';

/**
 * Bank adapters and the accounts each may write to. An adapter writes only to its bound live
 * accounts; bank-ingest sees a binding at once, an unbinding or a revocation within a second.
 */

export interface BankAdapterView {
  id: string;
  object: 'bank_adapter';
  name: string;
  bank_account_ids: string[];
  created_at: string;
  revoked_at: string | null;
}

/** The create output: the only time the secret is shown (it is stored sealed). */
export type CreatedBankAdapterView = BankAdapterView & { secret: string };

export async function createBankAdapter(
  prisma: PrismaClient,
  input: { name: string; bankAccountIds: string[] },
  secretBox: SecretBox,
): Promise<CreatedBankAdapterView> {
  const secret = newSigningSecret();
  const id = newId('adapter');
  const view = await prisma.$transaction(async (tx) => {
    await tx.bankAdapter.create({ data: { id, name: input.name, secretEncrypted: secretBox.seal(secret, { kind: 'bank_adapter', id }) } });
    await bind(tx, id, input.bankAccountIds);
    return adapterView(tx, id);
  });
  return { ...view, secret };
}

/** Binding an account already bound changes nothing. */
export async function bindBankAdapter(prisma: PrismaClient, input: { adapterId: string; bankAccountIds: string[] }): Promise<BankAdapterView> {
  return prisma.$transaction(async (tx) => {
    await activeAdapter(tx, input.adapterId);
    await bind(tx, input.adapterId, input.bankAccountIds);
    return adapterView(tx, input.adapterId);
  });
}

/** Unbinding an account not bound changes nothing. */
export async function unbindBankAdapter(prisma: PrismaClient, input: { adapterId: string; bankAccountIds: string[] }): Promise<BankAdapterView> {
  return prisma.$transaction(async (tx) => {
    await existingAdapter(tx, input.adapterId);
    await tx.bankAdapterAccount.deleteMany({ where: { adapterId: input.adapterId, bankAccountId: { in: input.bankAccountIds } } });
    return adapterView(tx, input.adapterId);
  });
}

/** Revoking twice keeps the first revocation time. */
export async function revokeBankAdapter(prisma: PrismaClient, input: { adapterId: string }, clock: Clock = systemClock): Promise<BankAdapterView> {
  await prisma.bankAdapter.updateMany({ where: { id: input.adapterId, revokedAt: null }, data: { revokedAt: clock.now() } });
  return adapterView(prisma, input.adapterId);
}

/**
 * Live accounts only (test accounts get deposits from the API alone), and never two accounts
 * of one identity (bank, branch, type, number) for one adapter: a statement naming that identity
 * could not tell them apart. The adapter's row is locked first, so two binds cannot race past
 * that check.
 */
async function bind(tx: Tx, adapterId: string, bankAccountIds: string[]): Promise<void> {
  await tx.$executeRaw`SELECT 1 FROM bank_adapters WHERE id = ${adapterId} FOR UPDATE`;
  const accounts = await tx.bankAccount.findMany({ where: { id: { in: bankAccountIds } } });
  for (const id of bankAccountIds) {
    const account = accounts.find((a) => a.id === id);
    if (account?.mode !== 'live') throw new AppError('parameter_invalid', `bank account ${id} is not a live bank account`, { param: 'bank-account' });
  }
  const bound = await tx.bankAdapterAccount.findMany({ where: { adapterId }, select: { bankAccount: true } });
  const identity = (a: { bankCode: string; branchCode: string; accountType: string; accountNumber: string }) =>
    `${a.bankCode}-${a.branchCode}-${a.accountType}-${a.accountNumber}`;
  const seen = new Map(bound.map(({ bankAccount }) => [identity(bankAccount), bankAccount.id]));
  for (const account of accounts) {
    const other = seen.get(identity(account));
    if (other !== undefined && other !== account.id) {
      throw new AppError('parameter_invalid', `bank account ${account.id} has the same bank, branch, type and number as ${other}, already bound`, {
        param: 'bank-account',
      });
    }
    seen.set(identity(account), account.id);
  }
  await tx.bankAdapterAccount.createMany({ data: bankAccountIds.map((bankAccountId) => ({ adapterId, bankAccountId })), skipDuplicates: true });
}

async function existingAdapter(tx: Tx, adapterId: string) {
  const adapter = await tx.bankAdapter.findUnique({ where: { id: adapterId } });
  if (adapter === null) throw new AppError('resource_missing', `bank adapter ${adapterId} does not exist`, { param: 'adapter' });
  return adapter;
}

async function activeAdapter(tx: Tx, adapterId: string): Promise<void> {
  const adapter = await existingAdapter(tx, adapterId);
  if (adapter.revokedAt !== null) throw new AppError('parameter_invalid', `bank adapter ${adapterId} is revoked`, { param: 'adapter' });
}

async function adapterView(db: Tx | PrismaClient, adapterId: string): Promise<BankAdapterView> {
  const row = await db.bankAdapter.findUnique({ where: { id: adapterId }, include: { accounts: { select: { bankAccountId: true } } } });
  if (row === null) throw new AppError('resource_missing', `bank adapter ${adapterId} does not exist`, { param: 'adapter' });
  return toBankAdapterView(row);
}

export function toBankAdapterView(row: {
  id: string;
  name: string;
  createdAt: Date;
  revokedAt: Date | null;
  accounts: { bankAccountId: string }[];
}): BankAdapterView {
  return {
    id: row.id,
    object: 'bank_adapter',
    name: row.name,
    bank_account_ids: row.accounts.map((a) => a.bankAccountId).sort(),
    created_at: row.createdAt.toISOString(),
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}
