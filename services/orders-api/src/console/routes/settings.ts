import { MATCHING_RULES, OrderId, RULE_PREVIEW_MAX, TransactionId, type MatchingRule } from '@pmatch/contracts';
import { Router, type Request } from 'express';
import { rowsOfPreview } from '../../use-cases/console-reads';
import type { ConsoleAppDeps } from '../../use-cases/console-login';
import { changeSettings, getAdminSecondFactorRule, getSettings, setAdminSecondFactorRule } from '../../use-cases/manage-settings';
import { applyRules, previewRules } from '../../use-cases/preview-rules';
import { redirectDone, sendScreen } from '../render';
import { reentryRefusal } from '../reentry';
import { auditContextOf, contextOf, field, fieldList, requireRole, signedInOf } from '../request';
import { RulePreviewScreen, SettingsScreen } from '../screens/settings';

const rulesOf = (req: Request): MatchingRule[] => MATCHING_RULES.filter((rule) => fieldList(req, 'rules').includes(rule));

/** The previewed pairs the apply form sends back, each `txn_…:ord_…`; anything else is dropped. */
const previewedPairsOf = (req: Request) =>
  fieldList(req, 'confirm')
    .slice(0, RULE_PREVIEW_MAX)
    .flatMap((pair) => {
      const [transactionId = '', orderId = ''] = pair.split(':');
      return TransactionId.safeParse(transactionId).success && OrderId.safeParse(orderId).success ? [{ transaction_id: transactionId, order_id: orderId }] : [];
    });

/** Auto-confirmation of late orders, the matching rules with their preview, and the organisation's second-factor rule. */
export function settingsRoutes(deps: ConsoleAppDeps): Router {
  const router = Router();

  router.get('/dashboard/settings', async (req, res) => {
    const { actor } = signedInOf(req);
    const [settings, requireAdminTotp] = await Promise.all([getSettings(deps, actor), getAdminSecondFactorRule(deps, actor.organisationId)]);
    sendScreen(res, SettingsScreen, { ctx: contextOf(req), settings, requireAdminTotp });
  });

  router.post('/dashboard/settings/auto-confirm', requireRole('admin'), async (req, res) => {
    await changeSettings(deps, signedInOf(req).actor, { auto_confirm_late_orders: field(req, 'auto_confirm_late_orders') === 'true' }, auditContextOf(req));
    redirectDone(res, '/dashboard/settings', 'saved');
  });

  // A security setting needs the admin's password again.
  router.post('/dashboard/settings/security', requireRole('admin'), async (req, res) => {
    const change = { required: field(req, 'require_admin_totp') === 'true', password: field(req, 'password') ?? '' };
    const changed = await setAdminSecondFactorRule(deps, deps.throttles.reentry, auditContextOf(req), change);
    if (changed.outcome === 'done') return redirectDone(res, '/dashboard/settings', 'saved');
    const { actor } = signedInOf(req);
    const refusal = reentryRefusal(contextOf(req).t, changed.outcome, 'password');
    const [settings, requireAdminTotp] = await Promise.all([getSettings(deps, actor), getAdminSecondFactorRule(deps, actor.organisationId)]);
    sendScreen(res, SettingsScreen, { ctx: contextOf(req), settings, requireAdminTotp, securityProblem: refusal.message }, refusal.status);
  });

  // A preview changes nothing: its answer is the page that offers to apply it.
  router.post('/dashboard/settings/rules/preview', requireRole('admin'), async (req, res) => {
    const { actor } = signedInOf(req);
    const rules = rulesOf(req);
    const [preview, current] = await Promise.all([previewRules(deps, actor, rules), getSettings(deps, actor)]);
    const { deposits, orders } = await rowsOfPreview(deps, actor, preview.confirmations);
    sendScreen(res, RulePreviewScreen, { ctx: contextOf(req), rules, current: current.matching_rules, preview, deposits, orders });
  });

  router.post('/dashboard/settings/rules/apply', requireRole('admin'), async (req, res) => {
    const pairs = previewedPairsOf(req);
    const result = await applyRules(deps, signedInOf(req).actor, rulesOf(req), pairs, auditContextOf(req));
    if (pairs.length === 0) return redirectDone(res, '/dashboard/settings', 'saved');
    redirectDone(res, '/dashboard/settings', 'applied', { confirmed: String(result.confirmed.length), left_held: String(result.left_held.length) });
  });

  return router;
}
