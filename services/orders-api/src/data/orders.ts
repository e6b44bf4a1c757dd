import type { OrderStatus } from '@pmatch/contracts';
import { modeOf, orderView, recordEvents, type OrderRow, type Prisma, type PrismaClient } from '@pmatch/db';
import type { AuthContext } from '../domain/auth';
import { pageBySeq, type Page } from './pages';
import { scopeOf } from './scope';

export async function findOrder(prisma: PrismaClient, auth: AuthContext, id: string): Promise<OrderRow | null> {
  return prisma.order.findFirst({ where: { id, ...scopeOf(auth) } });
}

export async function findOrderByExternalId(prisma: PrismaClient, auth: AuthContext, externalId: string): Promise<OrderRow | null> {
  return prisma.order.findUnique({
    where: { organisationId_mode_externalId: { organisationId: auth.organisationId, mode: auth.mode, externalId } },
  });
}

/**
 * Changes an open order and records the change event, in one DB transaction. Conditional on the
 * order still being open and not from a shop: null when it no longer is (the matcher may have
 * paid it a moment ago).
 */
export async function changeOpenOrder(
  prisma: PrismaClient,
  order: OrderRow,
  change: { data: Prisma.OrderUpdateManyMutationInput; event: 'order.updated' | 'order.canceled'; fromStatuses: OrderStatus[] },
  now: Date,
  publicBaseUrl: string,
): Promise<OrderRow | null> {
  return prisma.$transaction(async (tx) => {
    const updated = await tx.order.updateMany({
      where: { id: order.id, status: { in: change.fromStatuses }, source: null },
      data: { ...change.data, updatedAt: now },
    });
    if (updated.count !== 1) return null;
    const row = await tx.order.findUniqueOrThrow({ where: { id: order.id } });
    await recordEvents(tx, { organisationId: row.organisationId, mode: modeOf(row), bankAccountId: row.bankAccountId, at: now }, [
      { type: change.event, data: { object: orderView(row, publicBaseUrl) } },
    ]);
    return row;
  });
}

/** Orders newest first, after the cursor order when given; undefined when the cursor is unknown. */
export async function listOrders(
  prisma: PrismaClient,
  auth: AuthContext,
  query: { status?: OrderStatus; externalId?: string; limit: number; startingAfter?: string },
): Promise<Page<OrderRow> | undefined> {
  const scope = scopeOf(auth);
  return pageBySeq(
    query,
    (id) => prisma.order.findFirst({ where: { id, ...scope }, select: { seq: true } }),
    (cursorSeq, take) =>
      prisma.order.findMany({
        where: {
          ...scope,
          ...(query.status === undefined ? {} : { status: query.status }),
          ...(query.externalId === undefined ? {} : { externalId: query.externalId }),
          ...(cursorSeq === undefined ? {} : { seq: { lt: cursorSeq } }),
        },
        orderBy: { seq: 'desc' },
        take,
      }),
  );
}
