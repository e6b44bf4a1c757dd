import { newId } from '@pmatch/contracts';
import { asSql, sql, preparedQuery, type SqlOrPrisma } from '@pmatch/db';
import { depositorKey, payerKey } from '../domain/names/payer-memory';

interface RememberValues {
  id: string;
  organisationId: string;
  mode: string;
  bankAccountId: string;
  depositorName: string;
  depositorKey: string;
  payerName: string;
  payerKey: string;
  createdBy: string;
  createdAt: Date;
}

const rememberQuery = preparedQuery<RememberValues>(
  'matcher.remember_payer',
  (
    p,
  ) => sql`INSERT INTO payer_aliases (id, organisation_id, mode, bank_account_id, depositor_name, depositor_key, payer_name, payer_key, created_by, created_at)
    VALUES (${p.id}, ${p.organisationId}, ${p.mode}, ${p.bankAccountId}, ${p.depositorName}, ${p.depositorKey}, ${p.payerName}, ${p.payerKey}, ${p.createdBy}, ${p.createdAt})
    ON CONFLICT (bank_account_id, depositor_key, payer_key) DO NOTHING`,
);

const forgetQuery = preparedQuery<{ bankAccountId: string; depositorKey: string; payerKey: string }>(
  'matcher.forget_payer',
  (p) => sql`DELETE FROM payer_aliases WHERE bank_account_id = ${p.bankAccountId} AND depositor_key = ${p.depositorKey} AND payer_key = ${p.payerKey}`,
);

/** A payer to remember or forget: a depositor name paying for a payer name on a bank account. */
export interface TaughtPayerRow {
  organisationId: string;
  mode: string;
  bankAccountId: string;
  depositorName: string;
  payerName: string;
}

/**
 * Remembers, in the caller's transaction, that the depositor name pays for the payer name on the
 * account (once: teaching it again changes nothing). A name of digits alone names nobody and is
 * not remembered.
 */
export async function rememberPayer(tx: SqlOrPrisma, taught: TaughtPayerRow, createdBy: string, now: Date): Promise<void> {
  const key = depositorKey(taught.depositorName);
  if (key === '') return;
  await asSql(tx).count(rememberQuery, {
    id: newId('payerAlias'),
    ...taught,
    depositorKey: key,
    payerKey: payerKey(taught.payerName),
    createdBy,
    createdAt: now,
  });
}

/** Forgets what `rememberPayer` remembered of this pair, in the caller's transaction. */
export async function forgetPayer(tx: SqlOrPrisma, taught: Pick<TaughtPayerRow, 'bankAccountId' | 'depositorName' | 'payerName'>): Promise<void> {
  await asSql(tx).count(forgetQuery, {
    bankAccountId: taught.bankAccountId,
    depositorKey: depositorKey(taught.depositorName),
    payerKey: payerKey(taught.payerName),
  });
}
