import type { MatchingRule, PreviewedConfirmation, Settings } from '@pmatch/contracts';
import type { Actor } from '../domain/actor';
import { auditedDecision, type AuditContext } from './audit';
import { auditOf, commandContext } from './change-order';
import type { OrdersApiDeps } from './deps';
import { assertMayChangeSettings, changeSettings } from './manage-settings';

/**
 * Which held deposits the matcher would confirm, and for which order, if `rules` were the seller's
 * matching rules: decided by the matcher's own `decide()`, nothing changed.
 */
export async function previewRules(deps: Pick<OrdersApiDeps, 'matcher'>, actor: Actor, rules: MatchingRule[]) {
  assertMayChangeSettings(actor);
  return deps.matcher.previewRules({ type: 'rules.preview', organisation_id: actor.organisationId, mode: actor.mode, matching_rules: rules });
}

/**
 * Makes `rules` the seller's matching rules, then has the matcher confirm the previewed pairs, each
 * only if deciding it again under `rules` still confirms it for that order.
 */
export async function applyRules(
  deps: Pick<OrdersApiDeps, 'database' | 'clock' | 'matcher'>,
  actor: Actor,
  rules: MatchingRule[],
  confirmations: { transaction_id: string; order_id: string }[],
  audit?: AuditContext,
): Promise<{ settings: Settings; confirmed: PreviewedConfirmation[]; left_held: { transaction_id: string; order_id: string }[] }> {
  const settings = await changeSettings(deps, actor, { matching_rules: rules }, audit);
  if (confirmations.length === 0) return { settings, confirmed: [], left_held: [] };
  // The matcher writes one audit row per deposit it confirms, each in that confirmation's transaction.
  const result = await auditedDecision(deps, audit, { action: 'settings.confirm_previewed', objectId: null, detail: { value: rules } }, (commandAudit) =>
    deps.matcher.confirmPreviewed({
      type: 'rules.confirm_previewed',
      matching_rules: rules,
      confirmations,
      ...commandContext(actor),
      ...auditOf(commandAudit),
    }),
  );
  return { settings, confirmed: result.confirmed, left_held: result.left_held };
}
