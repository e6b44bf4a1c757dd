import { Prisma, constantText, transactionFields, unprefixed, type PrismaClient, type Tx, type TransactionRow } from '@pmatch/db';
import { amountCandidatesFrom, amountCandidatesQuery, type AmountCandidates, type CandidateRow } from './candidates';

/** A held deposit with its amount candidates as a decision reads them. */
export interface HeldDeposit {
  deposit: TransactionRow;
  candidates: AmountCandidates;
}

const CANDIDATE = 'candidate.';

/**
 * One page of an organisation's held deposits in one mode, oldest first after `afterSeq`, each with
 * its amount candidates: one statement (a lateral read of the candidates per deposit), so one
 * snapshot. Nothing is locked: what is read serves a preview, never a write.
 */
export async function readHeldDeposits(
  prisma: PrismaClient,
  scope: { organisationId: string; mode: string },
  page: { afterSeq: bigint; size: number },
): Promise<{ held: HeldDeposit[]; lastSeq: bigint | undefined }> {
  const candidates = Prisma.raw(
    constantText(amountCandidatesQuery({ account: 'h.bank_account_id', amount: 'h.amount', occurredAt: 'h.occurred_at' }, CANDIDATE)),
  );
  const rows = await prisma.$queryRaw<Record<string, unknown>[]>`
    WITH held AS (
      SELECT * FROM transactions
      WHERE organisation_id = ${scope.organisationId} AND mode = ${scope.mode} AND status = 'held' AND seq > ${page.afterSeq}
      ORDER BY seq LIMIT ${page.size})
    SELECT ${Prisma.raw(transactionFields('h', 'transaction.'))}, c.*
    FROM held h LEFT JOIN LATERAL (${candidates}) c ON true
    ORDER BY h.seq`;
  const byDeposit = new Map<string, { deposit: TransactionRow; rows: CandidateRow[] }>();
  for (const row of rows) {
    const deposit = unprefixed<TransactionRow>(row, 'transaction.')!;
    const entry = byDeposit.get(deposit.id) ?? { deposit, rows: [] };
    const candidate = unprefixed<CandidateRow>(row, CANDIDATE);
    if (candidate !== undefined) entry.rows.push(candidate);
    byDeposit.set(deposit.id, entry);
  }
  const held = [...byDeposit.values()].map(({ deposit, rows: found }) => ({ deposit, candidates: amountCandidatesFrom(found) }));
  return { held, lastSeq: held.at(-1)?.deposit.seq };
}

/** The deposit, locked for a decision, if it is still held in this organisation and mode. */
export async function lockHeldDeposit(tx: Tx, scope: { organisationId: string; mode: string }, transactionId: string): Promise<TransactionRow | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM transactions
    WHERE id = ${transactionId} AND organisation_id = ${scope.organisationId} AND mode = ${scope.mode} AND status = 'held'
    FOR UPDATE`;
  if (rows.length === 0) return null;
  return tx.transaction.findUniqueOrThrow({ where: { id: transactionId } });
}
