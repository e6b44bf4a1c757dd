import { PAYMENT_TOKEN_PATTERN, randomBase62, type PaymentLinkStatus } from '@pmatch/contracts';
import { modeOf, orderTimes, paymentLinkStatus, type PaymentLinkRow } from '@pmatch/db';
import { ATTEMPT_PATTERN, judgeBuyerName, linkOrderExternalId, type BuyerName } from '../domain/payment-links';
import type { PageLanguage } from '../domain/payment-page';
import { createOrderAtLink, findPaymentLinkByToken } from '../data/payment-links';
import type { OrdersApiDeps } from './deps';

type Deps = Pick<OrdersApiDeps, 'database' | 'clock' | 'publicBaseUrl' | 'outbox'>;

/** What the page shows below the link: the name form (with a refusal), the bank form to confirm, or why no order can be made. */
export type PaymentLinkPageStep =
  | { kind: 'form'; typed: string; refused?: Exclude<BuyerName, { kind: 'printable' }> }
  | { kind: 'preview'; typed: string; bankForm: string; attempt: string }
  | { kind: 'closed'; status: Exclude<PaymentLinkStatus, 'active'> }
  | { kind: 'too_many_orders' };

/** The link's page to show with its status and step, or where to send the buyer (their new order's payment page). */
export type LinkPageAnswer = { status: number; link: PaymentLinkRow; step: PaymentLinkPageStep } | { redirectTo: string };

/** What the buyer's form posted; anything may be missing or malformed. */
export interface LinkForm {
  step: unknown;
  payer_name: unknown;
  attempt: unknown;
}

/** The page of the link behind `token`, or null when no link has it. */
export async function showPaymentLink(deps: Deps, token: string): Promise<LinkPageAnswer | null> {
  const link = await findLink(deps, token);
  if (link === null) return null;
  const status = paymentLinkStatus(link, deps.clock.now());
  return status === 'active' ? page(link, 200, { kind: 'form', typed: '' }) : page(link, 410, { kind: 'closed', status });
}

/**
 * One post of the link's form: `preview` shows the name as the bank will print it, `edit` goes
 * back to the form, `create` makes the order (if `admit` lets this buyer order now) and sends the
 * buyer to its payment page. A name no bank prints is refused with the reason, nothing stored.
 */
export async function submitPaymentLinkForm(
  deps: Deps,
  token: string,
  form: LinkForm,
  language: PageLanguage,
  admit: () => Promise<boolean>,
): Promise<LinkPageAnswer | null> {
  const link = await findLink(deps, token);
  if (link === null) return null;
  const now = deps.clock.now();
  const status = paymentLinkStatus(link, now);
  if (status !== 'active') return page(link, 410, { kind: 'closed', status });
  const typed = typeof form.payer_name === 'string' ? form.payer_name : '';
  if (form.step === 'edit') return page(link, 200, { kind: 'form', typed });
  const name = judgeBuyerName(typed);
  if (name.kind !== 'printable') return page(link, 400, { kind: 'form', typed, refused: name });
  const attempt = typeof form.attempt === 'string' && ATTEMPT_PATTERN.test(form.attempt) ? form.attempt : undefined;
  if (form.step !== 'create' || attempt === undefined) {
    return page(link, 200, { kind: 'preview', typed: name.typed, bankForm: name.bankForm, attempt: randomBase62(24) });
  }
  if (!(await admit())) return page(link, 429, { kind: 'too_many_orders' });

  const times = orderTimes({}, now);
  const result = await createOrderAtLink(
    deps.database.prisma,
    link.id,
    {
      organisationId: link.organisationId,
      mode: modeOf(link),
      bankAccountId: link.bankAccountId,
      amount: Number(link.amount),
      // The name as the bank prints it is what the deposit will carry: the order matches it exactly.
      payerName: name.bankForm,
      externalId: linkOrderExternalId(link.id, attempt),
      itemName: link.itemName,
      orderedAt: times.orderedAt,
      expiresAt: times.expiresAt,
      metadata: link.metadata as Record<string, string>,
      source: 'payment_link',
      paymentLinkId: link.id,
    },
    now,
    deps.publicBaseUrl,
  );
  if (result.kind === 'refused') {
    // The link changed since it was read: deactivated, used up or ended meanwhile.
    const closed = paymentLinkStatus(result.link, deps.clock.now());
    return page(result.link, 410, { kind: 'closed', status: closed === 'active' ? 'used_up' : closed });
  }
  if (result.kind === 'created') deps.outbox.nudge();
  return { redirectTo: `/pay/${result.order.paymentToken}?lang=${language}` };
}

async function findLink(deps: Deps, token: string): Promise<PaymentLinkRow | null> {
  // A malformed token cannot belong to a link, so it is turned away without a query.
  if (!PAYMENT_TOKEN_PATTERN.test(token)) return null;
  return findPaymentLinkByToken(deps.database.prisma, token);
}

function page(link: PaymentLinkRow, status: number, step: PaymentLinkPageStep): LinkPageAnswer {
  return { status, link, step };
}
