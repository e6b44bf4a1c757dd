import { MATCHING_RULES, type MatchingRule } from '@pmatch/contracts';
import { asSql, sql, statement, transactionFields, unprefixed, type Row, type SqlOrPrisma, type TransactionRow } from '@pmatch/db';
import { OutOfScopeError } from '@pmatch/platform';
import type { NameMatcher } from '../domain/decide';
import { nameMatcher } from '../domain/names/matcher';
import { amountCandidatesFrom, amountCandidatesQuery, type AmountCandidates, type CandidateRow } from './candidates';

/** A deposit the matcher may decide, as one statement read it with what the decision needs. */
export interface PendingDeposit {
  deposit: TransactionRow;
  /** The deposit row's version as read (`xmin`): the decision is written onto that version only. */
  version: string;
  /** How names are compared for this deposit: its organisation's rules for its mode. */
  nameMatcher: NameMatcher;
  candidates: AmountCandidates;
}

/** A message being processed: the inbox row that says so is written with the decision. */
export interface MessageClaim {
  consumer: string;
  messageId: string;
}

/** The candidate columns of a row of `readDepositStatement`, under this prefix. */
const CANDIDATE = 'candidate.';

/** The deposit is to be decided if it is a pending deposit and the message is new; only then are its candidates read. */
export const readDepositStatement = statement<MessageClaim & { transactionId: string }, Row>(
  'matcher.read_deposit_to_decide',
  (p) => sql`WITH deposit AS (
     SELECT t.*, t.xmin::text AS version, s.matching_rules,
       t.status = 'pending' AND t.direction = 'deposit'
         AND NOT EXISTS (SELECT FROM inbox i WHERE i.consumer = ${p.consumer} AND i.message_id = ${p.messageId}) AS to_decide
     FROM transactions t
     LEFT JOIN settings s ON s.organisation_id = t.organisation_id AND s.mode = t.mode
     WHERE t.id = ${p.transactionId})
   SELECT ${transactionFields('d', 'transaction.')}, d.version AS "version", d.matching_rules AS "matchingRules", d.to_decide AS "toDecide", c.*
   FROM deposit d
   LEFT JOIN LATERAL (${amountCandidatesQuery({ account: 'd.bank_account_id', amount: 'd.amount', occurredAt: 'd.occurred_at' }, CANDIDATE)}) c ON d.to_decide`,
);

/**
 * Reads a deposit (OutOfScopeError if it does not exist) and, if it is pending and the message new, its seller's
 * matching rules and amount candidates: one statement, one snapshot, no lock. `pending` is
 * undefined when there is nothing to decide. An order committed after the read is the late-order
 * check's to see, which waits for the account's lock, so for this decision to be written.
 */
export async function readDeposit(
  db: SqlOrPrisma,
  transactionId: string,
  claim: MessageClaim,
): Promise<{ transaction: TransactionRow; pending?: PendingDeposit }> {
  const rows = await asSql(db).rows(readDepositStatement, { transactionId, consumer: claim.consumer, messageId: claim.messageId });
  const first = rows[0];
  const transaction = first === undefined ? undefined : unprefixed<TransactionRow>(first, 'transaction.');
  if (first === undefined || transaction === undefined) throw new OutOfScopeError(`transaction ${transactionId} does not exist`);
  if (first.toDecide !== true) return { transaction };
  const candidates = rows.flatMap((row) => unprefixed<CandidateRow>(row, CANDIDATE) ?? []);
  return {
    transaction,
    pending: {
      deposit: transaction,
      version: first.version as string,
      nameMatcher: nameMatcherOf(first.matchingRules as string[] | null),
      candidates: amountCandidatesFrom(candidates),
    },
  };
}

/** How names are compared under a seller's enabled rules (`settings.matching_rules`; none without a settings row). */
export function nameMatcherOf(matchingRules: string[] | null | undefined): NameMatcher {
  // The column is plain TEXT[]: a name this version does not know enables nothing.
  const rules = (matchingRules ?? []).filter((r): r is MatchingRule => (MATCHING_RULES as readonly string[]).includes(r));
  return nameMatcher(rules);
}
