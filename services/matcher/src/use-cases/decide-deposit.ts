import type { DepositReceived } from '@pmatch/contracts';
import { currentTrace, formatTraceparent, isUniqueViolation, runInTrace, type OutboxHandOver, type TraceContext, type TransactionRow } from '@pmatch/db';
import { OutOfScopeError } from '@pmatch/platform';
import { StaleDecisionError } from '../data/conditional-writes';
import { writeDecisionsInBatches, type WriteDecisions } from '../data/decisions-batched';
import type { DecidedDeposit } from '../data/decision-rows';
import { readDecisionInputs } from '../data/decision-inputs';
import { readDeposits, type DepositRead, type MessageClaim } from '../data/deposit-to-decide';
import { decideUnderRules } from '../domain/decide-under-rules';
import { MAX_ATTEMPTS, underAccountLock, type MatcherDeps } from './deps';

export type DecideDepositDeps = MatcherDeps & {
  /** Takes the decisions' announcements once written (the outbox relay's `publishLeased`). */
  handOver: OutboxHandOver;
};

export const DEPOSITS_CONSUMER = 'matcher.deposits';

/** At most this many of one account's waiting messages are taken by one hold of its lock. */
export const DEPOSITS_PER_HOLD = 50;

/** Decides the deposit of one `deposit.received` message; resolves with the deposit as it now stands. */
export type DepositDecider = (message: DepositReceived, messageId: string) => Promise<TransactionRow>;

/** A message waiting for its deposit's decision, and how it is answered. */
interface Asked {
  transactionId: string;
  claim: MessageClaim;
  trace: TraceContext | undefined;
  /** Decisions found stale so far. */
  attempts: number;
  settled: boolean;
  resolve: (transaction: TransactionRow) => void;
  reject: (error: unknown) => void;
}

/**
 * `deposit.received`: under the account's lock, reads the pending deposits with their candidates,
 * decides and writes each decision with its events, conditional on the rows read (decision 0008);
 * an account's messages waiting for its lock here are decided together in arrival order (decision
 * 0093). A message seen before or a deposit already decided changes nothing; one whose transaction
 * is missing or not on the account it names is refused with OutOfScopeError.
 */
export function depositDecider(deps: DecideDepositDeps): DepositDecider {
  const writeDecisions = writeDecisionsInBatches(deps.database.sql, deps.handOver);
  const waiting = new Map<string, Asked[]>();

  const decideWaiting = async (bankAccountId: string): Promise<void> => {
    const queue = waiting.get(bankAccountId) ?? [];
    const taken = queue.splice(0, DEPOSITS_PER_HOLD);
    if (queue.length === 0) waiting.delete(bankAccountId);
    try {
      for (let open = taken; open.length > 0; open = open.filter((a) => !a.settled)) await decideRound(deps, writeDecisions, bankAccountId, open);
    } catch (error) {
      for (const asked of taken) settle(asked, () => asked.reject(error));
    }
  };

  return (message, messageId) =>
    new Promise<TransactionRow>((resolve, reject) => {
      const bankAccountId = message.bank_account_id;
      const asked: Asked = {
        transactionId: message.transaction_id,
        claim: { consumer: DEPOSITS_CONSUMER, messageId },
        trace: currentTrace(),
        attempts: 0,
        settled: false,
        resolve,
        reject,
      };
      const queue = waiting.get(bankAccountId);
      if (queue === undefined) waiting.set(bankAccountId, [asked]);
      else queue.push(asked);
      // Every message asks for the lock; a hold takes what waits then, so later holds may find nothing left.
      underAccountLock(deps, bankAccountId, () => decideWaiting(bankAccountId)).catch((error: unknown) => {
        // The lock was not had: a message still waiting gives up; one taken is answered by the hold that took it.
        const queue = waiting.get(bankAccountId);
        const at = queue?.indexOf(asked) ?? -1;
        if (at === -1) return;
        queue!.splice(at, 1);
        if (queue!.length === 0) waiting.delete(bankAccountId);
        settle(asked, () => reject(error));
      });
    });
}

/**
 * One read, the decisions, one write for the messages given, in order. Each decision is made on
 * the rows as read; a deposit whose candidates include an order paid by a decision before it in
 * this round, or named again, is left with all after it for the next round, so no decision written
 * depends on another of the same write. Settles what it decides, or finds nothing to decide for.
 */
async function decideRound(deps: DecideDepositDeps, writeDecisions: WriteDecisions, bankAccountId: string, open: Asked[]): Promise<void> {
  const startedAt = deps.clock.now();
  const reads = await readDeposits(deps.database.sql, open);
  const pendings = reads.flatMap((read) => (read?.pending === undefined ? [] : [read.pending]));
  const inputs = new Map((await readDecisionInputs(deps.database.sql, pendings)).map((input, i) => [pendings[i]!, input]));
  const now = deps.clock.now();
  const ctx = { publicBaseUrl: deps.publicBaseUrl, now, startedAt };
  const paidHere = new Set<string>();
  const named = new Set<string>();
  const deciding: { asked: Asked; decided: DecidedDeposit }[] = [];
  for (const [i, asked] of open.entries()) {
    const read = reads[i];
    const refusal = outOfScope(read, asked, bankAccountId);
    if (refusal !== undefined) {
      settle(asked, () => asked.reject(refusal));
      continue;
    }
    const { transaction, pending } = read!;
    if (named.has(transaction.id) || (pending !== undefined && pending.candidates.orders.some((o) => paidHere.has(o.id)))) break;
    named.add(transaction.id);
    if (pending === undefined) {
      settle(asked, () => asked.resolve(transaction));
      continue;
    }
    const decision = decideUnderRules(pending.rules, deps.readings, inputs.get(pending)!, pending.candidates, now);
    if (decision.outcome === 'confirmed') paidHere.add(decision.orderId);
    const traceparent = asked.trace === undefined ? undefined : formatTraceparent(asked.trace);
    deciding.push({ asked, decided: { pending, decision, claim: asked.claim, ctx, ...(traceparent === undefined ? {} : { traceparent }) } });
  }
  const results = writeDecisions(deciding.map((d) => d.decided));
  await Promise.all(
    deciding.map(({ asked, decided }, i) =>
      results[i]!.then(
        (written) => inTraceOf(asked, () => answerDecided(deps, asked, decided, written)),
        (error: unknown) => {
          const stale = error instanceof StaleDecisionError || isUniqueViolation(error);
          asked.attempts += 1;
          if (!stale || asked.attempts >= MAX_ATTEMPTS) settle(asked, () => asked.reject(error));
          else inTraceOf(asked, () => deps.logger.warn({ err: error, bankAccountId, attempt: asked.attempts }, 'decision was stale; deciding again'));
        },
      ),
    ),
  );
}

/** Why a message is refused: its transaction does not exist, or is not on the bank account it names (whose lock is held). */
function outOfScope(read: DepositRead | undefined, asked: Asked, bankAccountId: string): OutOfScopeError | undefined {
  if (read === undefined) return new OutOfScopeError(`transaction ${asked.transactionId} does not exist`);
  if (read.transaction.bankAccountId !== bankAccountId) {
    return new OutOfScopeError(`transaction ${read.transaction.id} is not on bank account ${bankAccountId}`);
  }
  return undefined;
}

function answerDecided(deps: DecideDepositDeps, asked: Asked, { pending, decision, ctx }: DecidedDeposit, written: TransactionRow): void {
  if (written.status === decision.outcome) {
    deps.logger.info({ transactionId: written.id, outcome: decision.outcome, reason: decision.explanation.reason }, 'deposit decided');
    deps.metrics?.decided(decision.outcome, decision.explanation.reason, (ctx.now.getTime() - pending.deposit.createdAt.getTime()) / 1000);
  }
  settle(asked, () => asked.resolve(written));
}

/** Answers a message once: a hold that failed may try to answer messages already answered. */
function settle(asked: Asked, answer: () => void): void {
  if (asked.settled) return;
  asked.settled = true;
  answer();
}

/** What is logged about a message's deposit carries the message's trace, whichever message's hold decided it. */
function inTraceOf(asked: Asked, work: () => void): void {
  if (asked.trace === undefined) work();
  else runInTrace(asked.trace, work);
}
