import { AppError, type Mode, type Order } from '@pmatch/contracts';
import { insertOrder, isUniqueViolation, modeOf, orderTimes, orderObject, type PrismaClient } from '@pmatch/db';
import { systemClock, type Clock } from '@pmatch/platform';
import { findOrganisation } from './commands';
import type { MatcherLink } from './matcher-link';

/**
 * The operator standing in for a shop platform (source `shop`): an order the platform
 * created, and the platform's report that it was paid. Creating writes like POST /v1/orders does
 * (insertOrder); paying is the matcher's write, so it is asked for, never done here.
 */

export interface CreateShopOrderInput {
  organisationId: string;
  mode: Mode;
  amount: number;
  payerName: string;
  externalId: string;
  itemName: string;
  /** Left out: the organisation's only bank account of the mode. */
  bankAccountId?: string;
  /** Left out: now. */
  orderedAt?: Date;
  /** Left out: 14 days from now. */
  expiresAt?: Date;
  metadata?: Record<string, string>;
}

export async function createShopOrder(prisma: PrismaClient, input: CreateShopOrderInput, publicBaseUrl: string, clock: Clock = systemClock): Promise<Order> {
  const now = clock.now();
  const { orderedAt, expiresAt } = orderTimes(input, now);
  const organisation = await findOrganisation(prisma, input.organisationId);
  const bankAccountId = await resolveBankAccount(prisma, organisation.id, input.mode, input.bankAccountId);
  try {
    const row = await insertOrder(
      prisma,
      {
        organisationId: organisation.id,
        mode: input.mode,
        bankAccountId,
        amount: input.amount,
        payerName: input.payerName,
        externalId: input.externalId,
        itemName: input.itemName,
        orderedAt,
        expiresAt,
        metadata: input.metadata ?? {},
        source: 'shop',
      },
      now,
      publicBaseUrl,
    );
    return orderObject(row, publicBaseUrl);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const existing = await prisma.order.findUnique({
      where: { organisationId_mode_externalId: { organisationId: organisation.id, mode: input.mode, externalId: input.externalId } },
      select: { id: true },
    });
    if (existing === null) throw error;
    throw new AppError(
      'external_id_conflict',
      `organisation ${organisation.id} already has a ${input.mode} order with external_id ${JSON.stringify(input.externalId)}: ${existing.id}`,
      { param: 'external-id', cause: error },
    );
  }
}

/**
 * A given account must be the organisation's, in the mode; otherwise the mode's only account.
 * Dedicated transfer accounts are not counted: they are given to API orders from their pool.
 */
async function resolveBankAccount(prisma: PrismaClient, organisationId: string, mode: Mode, requested: string | undefined): Promise<string> {
  const accounts = await prisma.bankAccount.findMany({ where: { organisationId, mode, dedicated: false }, select: { id: true }, orderBy: { id: 'asc' } });
  if (requested !== undefined) {
    if (!accounts.some((account) => account.id === requested)) {
      throw new AppError(
        'parameter_invalid',
        `bank account ${requested} is not a ${mode} bank account of organisation ${organisationId} (or is a dedicated one)`,
        {
          param: 'bank-account',
        },
      );
    }
    return requested;
  }
  const [only, ...others] = accounts;
  if (only === undefined) {
    const howToGetOne = mode === 'test' ? 'its first test key creates one (ops key issue)' : 'add one with ops bank-account add';
    throw new AppError('parameter_missing', `organisation ${organisationId} has no ${mode} bank account: ${howToGetOne}`, {
      param: 'bank-account',
    });
  }
  if (others.length > 0) {
    throw new AppError(
      'parameter_missing',
      `organisation ${organisationId} has ${accounts.length} ${mode} bank accounts; say which with --bank-account (${accounts.map((a) => a.id).join(', ')})`,
      { param: 'bank-account' },
    );
  }
  return only.id;
}

export interface PayShopOrderInput {
  orderId: string;
  /** Left out: the matcher's now. */
  paidAt?: Date;
}

/**
 * The shop platform reports payment → paid_outside, payment.transaction_id null,
 * order.paid. The matcher decides and writes (it refuses an order that is not open); the order's
 * own organisation and mode scope the command.
 */
export async function payShopOrder(prisma: PrismaClient, matcher: MatcherLink, input: PayShopOrderInput): Promise<Order> {
  const order = await prisma.order.findUnique({
    where: { id: input.orderId },
    select: { id: true, organisationId: true, mode: true, source: true },
  });
  if (order === null) throw new AppError('resource_missing', `order ${input.orderId} does not exist`, { param: 'order' });
  if (order.source !== 'shop') {
    throw new AppError(
      'parameter_invalid',
      `order ${order.id} did not come from a shop platform; its merchant marks it paid with POST /v1/orders/${order.id}/mark-paid`,
      { param: 'order' },
    );
  }
  return matcher.orderCommand({
    type: 'order.mark_paid',
    organisation_id: order.organisationId,
    mode: modeOf(order),
    order_id: order.id,
    trigger: 'shop',
    ...(input.paidAt === undefined ? {} : { paid_at: input.paidAt.toISOString() }),
  });
}
