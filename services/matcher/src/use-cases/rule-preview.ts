import { RULE_PREVIEW_MAX, type MatcherCommand, type PreviewedConfirmation } from '@pmatch/contracts';
import { orderObject } from '@pmatch/db';
import { findAmountCandidates } from '../data/candidates';
import { appendDecisionAudit } from '../data/audit-rows';
import { confirmDeposit, recordEventsFor } from '../data/conditional-writes';
import { readDecisionInputs } from '../data/decision-inputs';
import { lockHeldDeposit, readHeldDeposits } from '../data/held-deposits';
import { decideUnderRules } from '../domain/decide-under-rules';
import { decidedBy } from '../domain/payments';
import { underAccountLock, type MatcherDeps } from './deps';

type Preview = Extract<MatcherCommand, { type: 'rules.preview' }>;
type ConfirmPreviewed = Extract<MatcherCommand, { type: 'rules.confirm_previewed' }>;

/** Held deposits read per statement while previewing. */
const HELD_PAGE_SIZE = 500;
/** The most held deposits one preview examines; past it the preview says some were left out. */
export const HELD_EXAMINED_MAX = 20_000;

export interface RulePreview {
  held_examined: number;
  held_left_out: boolean;
  confirmations: PreviewedConfirmation[];
}

/**
 * Which held deposits `decide()` would confirm under `matching_rules`, and for which order: the
 * same decision a new deposit gets, on the candidates as they are now. An order that several held
 * deposits would each be confirmed for is listed for none of them: which one paid is for a person
 * to say. Changes nothing. At most RULE_PREVIEW_MAX confirmations are listed; `held_left_out` says
 * when there may be more.
 */
export async function previewRules(deps: MatcherDeps, command: Preview): Promise<RulePreview> {
  const now = deps.clock.now();
  const found: PreviewedConfirmation[] = [];
  let examined = 0;
  let afterSeq = 0n;
  for (;;) {
    const { held, lastSeq } = await readHeldDeposits(
      deps.prisma,
      { organisationId: command.organisation_id, mode: command.mode },
      { afterSeq, size: HELD_PAGE_SIZE },
    );
    const inputs = await readDecisionInputs(deps.prisma, held);
    for (const [i, { deposit, candidates }] of held.entries()) {
      examined += 1;
      const decision = decideUnderRules(command.matching_rules, deps.readings, inputs[i]!, candidates, now);
      if (decision.outcome === 'confirmed') found.push({ transaction_id: deposit.id, order_id: decision.orderId, reason: decision.reason });
    }
    if (lastSeq === undefined || held.length < HELD_PAGE_SIZE) return listed(found, examined, false);
    if (examined >= HELD_EXAMINED_MAX) return listed(found, examined, true);
    afterSeq = lastSeq;
  }
}

/** The preview of what was found: the orders taken once, at most RULE_PREVIEW_MAX of them. */
function listed(found: PreviewedConfirmation[], examined: number, heldLeftOut: boolean): RulePreview {
  const confirmations = takenOnce(found);
  return {
    held_examined: examined,
    held_left_out: heldLeftOut || confirmations.length > RULE_PREVIEW_MAX,
    confirmations: confirmations.slice(0, RULE_PREVIEW_MAX),
  };
}

/** The pairs whose order no other pair names. */
function takenOnce<P extends { order_id: string }>(pairs: P[]): P[] {
  const takers = new Map<string, number>();
  for (const { order_id } of pairs) takers.set(order_id, (takers.get(order_id) ?? 0) + 1);
  return pairs.filter(({ order_id }) => takers.get(order_id) === 1);
}

/**
 * Confirms the pairs a person saw in a preview, each under its account's lock in its own DB
 * transaction, and only if deciding the deposit again under `matching_rules` still confirms it
 * for that order; any other is left held, as it was, and so are pairs naming an order another pair
 * names. `callerWaits` is asked before each pair: once the caller has given up, the rest are left
 * for a new preview.
 */
export async function confirmPreviewed(
  deps: MatcherDeps,
  command: ConfirmPreviewed,
  callerWaits: () => boolean,
): Promise<{ confirmed: PreviewedConfirmation[]; left_held: { transaction_id: string; order_id: string }[] }> {
  const scope = { organisationId: command.organisation_id, mode: command.mode };
  const confirmed: PreviewedConfirmation[] = [];
  const leftHeld: { transaction_id: string; order_id: string }[] = [];
  const ownOrder = new Set(takenOnce(command.confirmations));
  for (const pair of command.confirmations) {
    if (!callerWaits()) break;
    if (!ownOrder.has(pair)) {
      leftHeld.push(pair);
      continue;
    }
    const found = await deps.prisma.transaction.findFirst({ where: { id: pair.transaction_id, ...scope }, select: { bankAccountId: true } });
    const done =
      found &&
      (await underAccountLock(deps, found.bankAccountId, () =>
        deps.prisma.$transaction(async (tx) => {
          const deposit = await lockHeldDeposit(tx, scope, pair.transaction_id);
          if (deposit === null) return null;
          const now = deps.clock.now();
          const candidates = await findAmountCandidates(tx, deposit.bankAccountId, deposit.amount, deposit.occurredAt);
          const [inputs] = await readDecisionInputs(tx, [{ deposit, candidates }]);
          const decision = decideUnderRules(command.matching_rules, deps.readings, inputs!, candidates, now);
          if (decision.outcome !== 'confirmed' || decision.orderId !== pair.order_id) return null;
          const { order, transaction } = await confirmDeposit(
            tx,
            deposit,
            decision.orderId,
            decidedBy(command, decision.reason),
            { depositStatuses: ['held'], orderStatuses: ['open'], payerName: decision.payerName },
            decision.explanation,
            now,
          );
          await recordEventsFor(tx, transaction, now, [{ type: 'order.paid', data: { object: orderObject(order, deps.publicBaseUrl) } }]);
          if (command.audit !== undefined)
            await appendDecisionAudit(tx, command, command.audit, deposit.id, { order_id: order.id, reason: decision.reason }, now);
          return { ...pair, reason: decision.reason };
        }),
      ));
    if (done) confirmed.push(done);
    else leftHeld.push(pair);
  }
  return { confirmed, left_held: leftHeld };
}
