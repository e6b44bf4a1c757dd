import { PAYMENT_TOKEN_LENGTH, newId, randomBase62, type Mode } from '@pmatch/contracts';
import { insertOrderAnnounced, isUniqueViolation, type Db, type NewOrder, type OrderRow, type PaymentLinkRow, type PrismaClient } from '@pmatch/db';
import type { Scope } from '../domain/actor';
import { findOrderByExternalId } from './orders';
import { sliceBySeq, type Slice } from './slices';
import { scopeOf } from './scope';

export interface NewPaymentLink {
  organisationId: string;
  mode: Mode;
  bankAccountId: string;
  amount: number;
  itemName: string;
  metadata: Record<string, string>;
  expiresAt: Date | null;
  useLimit: number | null;
}

export async function insertPaymentLink(db: Db, link: NewPaymentLink, now: Date): Promise<PaymentLinkRow> {
  return db.paymentLink.create({
    data: {
      id: newId('paymentLink'),
      ...link,
      amount: BigInt(link.amount),
      // The page's address: unguessable, and unrelated to the id merchants use with the API.
      token: randomBase62(PAYMENT_TOKEN_LENGTH),
      createdAt: now,
      updatedAt: now,
    },
  });
}

/** The link with this id in the caller's scope (organisation, mode, bank account if limited). */
export async function findPaymentLink(db: Db, scope: Scope, id: string): Promise<PaymentLinkRow | null> {
  return db.paymentLink.findFirst({ where: { id, ...scopeOf(scope) } });
}

/** Links newest first, after the cursor link when given; undefined when the cursor is unknown. */
export async function listPaymentLinks(db: Db, scope: Scope, query: { limit: number; startingAfter?: string }): Promise<Slice<PaymentLinkRow> | undefined> {
  const inScope = scopeOf(scope);
  return sliceBySeq(
    query,
    (id) => db.paymentLink.findFirst({ where: { id, ...inScope }, select: { seq: true } }),
    (cursorSeq, take) =>
      db.paymentLink.findMany({
        where: { ...inScope, ...(cursorSeq === undefined ? {} : { seq: { lt: cursorSeq } }) },
        orderBy: { seq: 'desc' },
        take,
      }),
  );
}

/** Deactivates the link unless it is already; either way answers it as it is now. */
export async function deactivatePaymentLink(db: Db, id: string, now: Date): Promise<PaymentLinkRow> {
  await db.paymentLink.updateMany({ where: { id, deactivatedAt: null }, data: { deactivatedAt: now, updatedAt: now } });
  return db.paymentLink.findUniqueOrThrow({ where: { id } });
}

/** The link behind a page's token; null when no link has it. */
export async function findPaymentLinkByToken(db: Db, token: string): Promise<PaymentLinkRow | null> {
  return db.paymentLink.findUnique({ where: { token } });
}

export type OrderAtLink = { kind: 'created' | 'existing'; order: OrderRow } | { kind: 'refused'; link: PaymentLinkRow };

/**
 * The order a buyer asked for at a link, in one DB transaction: the link's count raised by one
 * only while it is active, unexpired and under its use limit (one conditional UPDATE, so buyers
 * at once can never pass the limit), the order, its `order.created` event and outbox rows. The
 * order's external_id names the buyer's attempt: asked again (a second click), the order made
 * the first time is answered and the count stays. `refused` gives the link as it is now.
 */
export async function createOrderAtLink(
  db: PrismaClient,
  linkId: string,
  order: NewOrder & { externalId: string },
  now: Date,
  publicBaseUrl: string,
): Promise<OrderAtLink> {
  const scope = { organisationId: order.organisationId, mode: order.mode, bankAccountId: null };
  try {
    return await db.$transaction(async (tx): Promise<OrderAtLink> => {
      const existing = await findOrderByExternalId(tx, scope, order.externalId);
      if (existing !== null) return { kind: 'existing', order: existing };
      const taken = await tx.$executeRaw`
        UPDATE payment_links SET use_count = use_count + 1, updated_at = ${now}
        WHERE id = ${linkId} AND deactivated_at IS NULL AND (expires_at IS NULL OR expires_at > ${now})
          AND (use_limit IS NULL OR use_count < use_limit)`;
      if (taken !== 1) return { kind: 'refused', link: await tx.paymentLink.findUniqueOrThrow({ where: { id: linkId } }) };
      return { kind: 'created', order: await insertOrderAnnounced(tx, order, now, publicBaseUrl) };
    });
  } catch (error) {
    // The same attempt committed its order while this one waited: that order is the answer.
    if (!isUniqueViolation(error)) throw error;
    const existing = await findOrderByExternalId(db, scope, order.externalId);
    if (existing === null) throw error;
    return { kind: 'existing', order: existing };
  }
}
