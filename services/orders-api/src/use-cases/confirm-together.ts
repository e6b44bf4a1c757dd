import { OrderId, TransactionId } from '@pmatch/contracts';
import type { OrderRow, TransactionRow } from '@pmatch/db';
import type { Actor } from '../domain/actor';
import { auditedDecision, type AuditContext } from './audit';
import { auditOf, commandContext } from './change-order';
import { rowsOfPreview } from './console-reads';
import type { OrdersApiDeps } from './deps';
import { getSettings } from './manage-settings';

// Held deposits confirmed together: what the matcher, deciding the held deposits again under the
// seller's rules as they are, would confirm (docs/decisions/0185-held-deposits-confirmed-together.md).

type Deps = Pick<OrdersApiDeps, 'database' | 'clock' | 'matcher'>;

/** A held deposit that deciding it again now would confirm, and that order. */
export interface ClearHeldDeposit {
  deposit: TransactionRow;
  order: OrderRow;
}

/**
 * The held deposits (oldest first, at most `limit`) that the matcher, deciding each again under the
 * seller's rules and the orders as they are now, would confirm, each to an order no other held
 * deposit would take. Changes nothing.
 */
export async function clearHeldDeposits(deps: Deps, actor: Actor, limit: number): Promise<ClearHeldDeposit[]> {
  const { matching_rules } = await getSettings(deps, actor);
  const preview = await deps.matcher.previewRules({ type: 'rules.preview', organisation_id: actor.organisationId, mode: actor.mode, matching_rules });
  const pairs = preview.confirmations.slice(0, limit);
  const { deposits, orders } = await rowsOfPreview(deps, actor, pairs);
  const depositById = new Map(deposits.map((d) => [d.id, d]));
  const orderById = new Map(orders.map((o) => [o.id, o]));
  return pairs.flatMap((pair) => {
    const deposit = depositById.get(pair.transaction_id);
    const order = orderById.get(pair.order_id);
    return deposit === undefined || order === undefined ? [] : [{ deposit, order }];
  });
}

/**
 * Has the matcher confirm the pairs a person was shown and asked for (at most `limit`; a pair that
 * names no deposit and order is ignored), each under its account's lock and only if deciding it
 * again under the seller's rules as they are still confirms it for that order, with one audit row
 * per confirmed deposit. Any other (another organisation's or mode's included) is left as it is and
 * counted.
 */
export async function confirmTogether(
  deps: Deps,
  actor: Actor,
  asked: { transaction_id: string; order_id: string }[],
  limit: number,
  audit?: AuditContext,
): Promise<{ confirmed: number; left: number }> {
  const confirmations = asked.slice(0, limit).filter((p) => TransactionId.safeParse(p.transaction_id).success && OrderId.safeParse(p.order_id).success);
  if (confirmations.length === 0) return { confirmed: 0, left: 0 };
  const { matching_rules } = await getSettings(deps, actor);
  const result = await auditedDecision(deps, audit, { action: 'transaction.match', objectId: null, detail: { together: true } }, (commandAudit) =>
    deps.matcher.confirmPreviewed({ type: 'rules.confirm_previewed', matching_rules, confirmations, ...commandContext(actor), ...auditOf(commandAudit) }),
  );
  return { confirmed: result.confirmed.length, left: confirmations.length - result.confirmed.length };
}
