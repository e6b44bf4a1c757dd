import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { importStatement, type StatementAccount, type StatementFormat, type StatementImportView } from '@pmatch/bank-ingest';
import { AppError } from '@pmatch/contracts';
import type { Database } from '@pmatch/db';
import type { Clock } from '@pmatch/platform';

/**
 * A statement file an operator has (a download from the bank's web service, say), imported with
 * bank-ingest's own checks and storing code: every account in it must be one of `bankAccountIds`.
 * Nothing is stored if any check fails. The deposits' messages wait in the outbox, unleased,
 * for a running service's relay.
 */
export async function importStatementFile(
  database: Database,
  input: { bankAccountIds: string[]; file: string; format?: StatementFormat },
  clock: Clock,
): Promise<StatementImportView> {
  const accounts = await database.prisma.bankAccount.findMany({ where: { id: { in: input.bankAccountIds }, mode: 'live' } });
  for (const id of input.bankAccountIds) {
    if (!accounts.some((a) => a.id === id)) throw new AppError('parameter_invalid', `bank account ${id} is not a live bank account`, { param: 'bank-account' });
  }
  await access(input.file).catch(() => {
    throw new AppError('parameter_invalid', `cannot read ${input.file}`, { param: 'file' });
  });
  return importStatement(
    { database },
    {
      read: () => createReadStream(input.file, { highWaterMark: 256 * 1024 }),
      ...(input.format === undefined ? {} : { format: input.format }),
      accountOf: async (named: StatementAccount, line: number) => {
        const account = accounts.find(
          (a) =>
            a.bankCode === named.bankCode &&
            a.branchCode === named.branchCode &&
            a.accountType === named.accountType &&
            a.accountNumber === named.accountNumber,
        );
        if (account === undefined) {
          throw new AppError(
            'account_not_allowed',
            `record ${line} names account ${named.bankCode}-${named.branchCode} ${named.accountType} ${named.accountNumber}, which no --bank-account is; nothing was stored`,
          );
        }
        return { ...account, mode: 'live', accountType: named.accountType };
      },
      receivedAt: clock.now(),
    },
  );
}
