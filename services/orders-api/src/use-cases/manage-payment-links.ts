import { AppError, PaymentLinkId, type CreatePaymentLinkRequest, type ListQuery, type PaymentLink } from '@pmatch/contracts';
import { paymentLinkObject, type PaymentLinkRow } from '@pmatch/db';
import type { z } from 'zod';
import type { Actor } from '../domain/actor';
import { resolveBankAccount } from '../domain/api-key-auth';
import { wellFormedId } from '../domain/ids';
import { paymentLinkExpiry } from '../domain/payment-links';
import { deactivatePaymentLink as deactivate, findPaymentLink, insertPaymentLink, listPaymentLinks } from '../data/payment-links';
import type { OrdersApiDeps } from './deps';
import { listOf, type List } from './lists';

type Deps = Pick<OrdersApiDeps, 'database' | 'clock' | 'publicBaseUrl'>;

/**
 * Creates a link for the actor's mode and one of its bank accounts. A link is the merchant's own
 * setting, like a webhook endpoint: it records no event (docs/decisions/0080-payment-links.md).
 */
export async function createPaymentLink(deps: Deps, actor: Actor, request: CreatePaymentLinkRequest): Promise<PaymentLink> {
  const now = deps.clock.now();
  const row = await insertPaymentLink(
    deps.database.prisma,
    {
      organisationId: actor.organisationId,
      mode: actor.mode,
      bankAccountId: resolveBankAccount(actor, request.bank_account_id),
      amount: request.amount,
      itemName: request.item_name,
      metadata: request.metadata ?? {},
      expiresAt: paymentLinkExpiry(request.expires_at, now),
      useLimit: request.use_limit ?? null,
    },
    now,
  );
  return paymentLinkObject(row, deps.publicBaseUrl, now);
}

/** The link with this id if the actor may see it, else 404. */
export async function findVisiblePaymentLink(deps: Pick<OrdersApiDeps, 'database'>, actor: Actor, rawId: string | undefined): Promise<PaymentLinkRow> {
  const id = wellFormedId(PaymentLinkId, rawId, 'payment link');
  const row = await findPaymentLink(deps.database.prisma, actor, id);
  if (row === null) throw new AppError('resource_missing', `No such payment link: ${id}.`, { param: 'id' });
  return row;
}

export async function getPaymentLink(deps: Deps, actor: Actor, rawId: string | undefined): Promise<PaymentLink> {
  return paymentLinkObject(await findVisiblePaymentLink(deps, actor, rawId), deps.publicBaseUrl, deps.clock.now());
}

/** Links newest first. */
export async function getPaymentLinkList(deps: Deps, actor: Actor, query: z.infer<typeof ListQuery>): Promise<List<PaymentLink>> {
  const page = await listPaymentLinks(deps.database.prisma, actor, {
    limit: query.limit,
    ...(query.starting_after === undefined ? {} : { startingAfter: query.starting_after }),
  });
  const now = deps.clock.now();
  return listOf(page, (row) => paymentLinkObject(row, deps.publicBaseUrl, now), { what: 'payment link', id: query.starting_after });
}

/** Stops the link taking orders; a link deactivated before keeps the moment it was. */
export async function deactivatePaymentLink(deps: Deps, link: PaymentLinkRow): Promise<PaymentLink> {
  const now = deps.clock.now();
  return paymentLinkObject(await deactivate(deps.database.prisma, link.id, now), deps.publicBaseUrl, now);
}
