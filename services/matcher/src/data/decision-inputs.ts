import { normaliseName, transferCodeOf } from '@pmatch/contracts';
import { amountOf, asSql, sql, preparedQuery, type Row, type SqlOrPrisma, type TransactionRow } from '@pmatch/db';
import type { OtherOrder } from '../domain/decide';
import type { DecisionInputs } from '../domain/decide-under-rules';
import { nearAmountRange } from '../domain/near-misses';
import { depositorKey, PayerMemory } from '../domain/names/payer-memory';
import type { AmountCandidates } from './candidates';

/** A deposit to decide and the orders of its amount, as read. */
export interface DepositWithCandidates {
  deposit: TransactionRow;
  candidates: AmountCandidates;
}

/** Twins read per deposit: more stored deposits of one amount on one day are compared by name in this many at most. */
const TWINS_READ = 50;
/** Orders of nearby amounts read per deposit. */
const NEAR_ORDERS_READ = 50;

interface ContextValues {
  account: string[];
  transactionId: string[];
  seq: bigint[];
  amount: bigint[];
  depositorKey: string[];
  code: (string | null)[];
  nearMin: bigint[];
  nearMax: bigint[];
}

/**
 * For each deposit (`item`, from 1): the payers taught for its depositor name on its account, the
 * order its transfer code names there (when the code is not one of its candidates'), the open
 * orders of nearby amounts (the nearest above and the nearest below, each an index range that
 * stops after NEAR_ORDERS_READ rows however many open orders the range holds), the deposits
 * stored before it on its account with its amount on its Tokyo day (its possible twins), and,
 * when its account is a dedicated one, whose it is and its last order. One statement, one
 * snapshot; the deposits must be stored.
 */
const readContextQuery = preparedQuery<ContextValues, Row>(
  'matcher.read_decision_context',
  (p) => sql`WITH asked AS (
     SELECT a.*, (t.occurred_at AT TIME ZONE 'Asia/Tokyo')::date AS day
     FROM unnest(${p.account}::text[], ${p.transactionId}::text[], ${p.seq}::bigint[], ${p.amount}::bigint[], ${p.depositorKey}::text[],
                 ${p.code}::text[], ${p.nearMin}::bigint[], ${p.nearMax}::bigint[])
       WITH ORDINALITY AS a(account, transaction_id, seq, amount, depositor_key, code, near_min, near_max, item)
     JOIN transactions t ON t.id = a.transaction_id)
   SELECT a.item::int AS item, 'payer' AS kind, p.payer_key AS "payerKey", NULL AS id, NULL AS status, NULL::bigint AS amount, NULL AS name
   FROM asked a JOIN payer_aliases p ON p.bank_account_id = a.account AND p.depositor_key = a.depositor_key
   UNION ALL
   SELECT a.item::int, 'code', NULL, o.id, o.status, o.amount, o.payer_name
   FROM asked a JOIN LATERAL (
     SELECT id, status, amount, payer_name FROM orders
     WHERE bank_account_id = a.account AND transfer_code = a.code
     ORDER BY status = 'open' DESC, seq DESC LIMIT 1) o ON a.code IS NOT NULL
   UNION ALL
   SELECT a.item::int, 'near', NULL, o.id, o.status, o.amount, o.payer_name
   FROM asked a JOIN LATERAL (
     SELECT id, status, amount, payer_name FROM (
       (SELECT id, status, amount, payer_name, seq FROM orders
        WHERE bank_account_id = a.account AND status = 'open' AND amount > a.amount AND amount <= a.near_max
        ORDER BY amount, seq LIMIT ${NEAR_ORDERS_READ})
       UNION ALL
       (SELECT id, status, amount, payer_name, seq FROM orders
        WHERE bank_account_id = a.account AND status = 'open' AND amount < a.amount AND amount >= a.near_min
        ORDER BY amount DESC, seq LIMIT ${NEAR_ORDERS_READ})) near
     ORDER BY abs(amount - a.amount), seq LIMIT ${NEAR_ORDERS_READ}) o ON true
   UNION ALL
   SELECT a.item::int, 'twin', NULL, t.id, t.status, t.amount, t.counterparty
   FROM asked a JOIN LATERAL (
     SELECT id, status, amount, counterparty FROM transactions
     WHERE bank_account_id = a.account AND direction = 'deposit' AND (occurred_at AT TIME ZONE 'Asia/Tokyo')::date = a.day
       AND amount = a.amount AND seq < a.seq
     ORDER BY seq LIMIT ${TWINS_READ}) t ON true
   UNION ALL
   SELECT a.item::int, 'dedicated', d.customer_reference, o.id, o.status, o.amount, NULL
   FROM asked a JOIN dedicated_accounts d ON d.bank_account_id = a.account
   LEFT JOIN LATERAL (SELECT id, status, amount FROM orders WHERE bank_account_id = a.account AND dedicated ORDER BY seq DESC LIMIT 1) o ON true`,
);

/**
 * What each deposit's decision needs beyond its candidates, read in one statement for all of them
 * (docs/decisions/0095-one-transfer-one-deposit.md for the twins). A twin is a deposit stored
 * earlier with the same account, amount, Tokyo day and depositor name (kana_width form): the same
 * transfer reported twice under two bank references, or a second one only a person can tell apart.
 */
export async function readDecisionInputs(db: SqlOrPrisma, deposits: readonly DepositWithCandidates[]): Promise<DecisionInputs[]> {
  if (deposits.length === 0) return [];
  const codes = deposits.map(({ deposit, candidates }) => {
    const code = transferCodeOf(deposit.counterparty, deposit.remitterCode);
    return { code, amongCandidates: code !== undefined && candidates.orders.some((o) => o.transferCode === code) };
  });
  const values: ContextValues = {
    account: [],
    transactionId: [],
    seq: [],
    amount: [],
    depositorKey: [],
    code: [],
    nearMin: [],
    nearMax: [],
  };
  deposits.forEach(({ deposit }, i) => {
    const near = nearAmountRange(amountOf(deposit.amount));
    values.account.push(deposit.bankAccountId);
    values.transactionId.push(deposit.id);
    values.seq.push(deposit.seq);
    values.amount.push(deposit.amount);
    values.depositorKey.push(depositorKey(deposit.counterparty));
    values.code.push(codes[i]!.amongCandidates ? null : (codes[i]!.code ?? null));
    values.nearMin.push(BigInt(near.min));
    values.nearMax.push(BigInt(near.max));
  });
  const rows = await asSql(db).rows(readContextQuery, values);
  return deposits.map(({ deposit }, i) => {
    const own = rows.filter((row) => row.item === i + 1);
    const other = (row: Row): OtherOrder => ({
      id: row.id as string,
      status: row.status as string,
      amount: amountOf(row.amount as bigint),
      payerName: row.name as string,
    });
    const name = normaliseName(deposit.counterparty);
    const twin = own.find((row) => row.kind === 'twin' && normaliseName(row.name as string) === name);
    const codeOrder = own.find((row) => row.kind === 'code');
    const dedicated = own.find((row) => row.kind === 'dedicated');
    return {
      facts: {
        amount: amountOf(deposit.amount),
        counterparty: deposit.counterparty,
        occurredAt: deposit.occurredAt,
        transferCode: codes[i]!.code,
        duplicateOf: twin?.id as string | undefined,
        bankReversal: deposit.bankReversal,
      },
      context: {
        ...(codeOrder === undefined ? {} : { codeOrder: other(codeOrder) }),
        nearAmountOrders: own.filter((row) => row.kind === 'near').map(other),
        ...(dedicated === undefined
          ? {}
          : {
              dedicatedAccount: {
                customerReference: (dedicated.payerKey as string | null) ?? null,
                lastOrder:
                  dedicated.id === null
                    ? undefined
                    : { id: dedicated.id as string, status: dedicated.status as string, amount: amountOf(dedicated.amount as bigint) },
              },
            }),
      },
      payers: new PayerMemory(
        own.filter((row) => row.kind === 'payer').map((row) => ({ depositorKey: depositorKey(deposit.counterparty), payerKey: row.payerKey as string })),
      ),
    };
  });
}
