import { AppError, type Mode } from '@pmatch/contracts';
import type { PrismaClient } from '@pmatch/db';
import { toBankAdapterView, type BankAdapterView } from './adapters';
import { findOrganisation } from './commands';
import {
  apiKeyView,
  operatorBankAccountView,
  organisationView,
  userView,
  type ApiKeyView,
  type OperatorBankAccountView,
  type OrganisationView,
  type UserView,
} from './views';

/**
 * The operator's reads: one object by id, or a page of them, oldest first (created_at, then id).
 * Nothing secret is read or printed: no key hash, password hash, setup token or sealed secret.
 */

export const LIST_LIMIT_DEFAULT = 100;
export const LIST_LIMIT_MAX = 1000;

export interface Page {
  limit: number;
  /** The id of the last object of the page before: this page starts after it. */
  startingAfter?: string;
}

export interface ListView<Item> {
  object: 'list';
  data: Item[];
  has_more: boolean;
}

const OLDEST_FIRST = [{ createdAt: 'asc' as const }, { id: 'asc' as const }];

/** The rows after the cursor in OLDEST_FIRST order; a cursor that names nothing is an error. */
async function afterCursor(page: Page, createdAtOf: (id: string) => Promise<{ createdAt: Date } | null>, what: string): Promise<object> {
  if (page.startingAfter === undefined) return {};
  const cursor = await createdAtOf(page.startingAfter);
  if (cursor === null) throw new AppError('resource_missing', `${what} ${page.startingAfter} does not exist`, { param: 'starting-after' });
  return { OR: [{ createdAt: { gt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { gt: page.startingAfter } }] };
}

/** Rows were read with take: limit + 1, so one more than the limit means there is a next page. */
function listOf<Row, Item>(rows: Row[], page: Page, view: (row: Row) => Item): ListView<Item> {
  return { object: 'list', data: rows.slice(0, page.limit).map(view), has_more: rows.length > page.limit };
}

async function assertOrganisation(prisma: PrismaClient, organisationId: string | undefined): Promise<void> {
  // A mistyped --org answers "does not exist" rather than an empty list.
  if (organisationId !== undefined) await findOrganisation(prisma, organisationId);
}

export async function getOrganisation(prisma: PrismaClient, organisationId: string): Promise<OrganisationView> {
  return organisationView(await findOrganisation(prisma, organisationId));
}

export async function listOrganisations(prisma: PrismaClient, page: Page): Promise<ListView<OrganisationView>> {
  const after = await afterCursor(page, (id) => prisma.organisation.findUnique({ where: { id }, select: { createdAt: true } }), 'organisation');
  const rows = await prisma.organisation.findMany({ where: after, orderBy: OLDEST_FIRST, take: page.limit + 1 });
  return listOf(rows, page, organisationView);
}

export interface ListFilter {
  organisationId?: string;
  mode?: Mode;
}

function scopeOf(filter: ListFilter): object {
  return {
    ...(filter.organisationId === undefined ? {} : { organisationId: filter.organisationId }),
    ...(filter.mode === undefined ? {} : { mode: filter.mode }),
  };
}

export async function getApiKey(prisma: PrismaClient, keyId: string): Promise<ApiKeyView> {
  const row = await prisma.apiKey.findUnique({ where: { id: keyId }, omit: { keyHash: true } });
  if (row === null) throw new AppError('resource_missing', `api key ${keyId} does not exist`, { param: 'key' });
  return apiKeyView(row);
}

export async function listApiKeys(prisma: PrismaClient, filter: ListFilter, page: Page): Promise<ListView<ApiKeyView>> {
  await assertOrganisation(prisma, filter.organisationId);
  const after = await afterCursor(page, (id) => prisma.apiKey.findUnique({ where: { id }, select: { createdAt: true } }), 'api key');
  const rows = await prisma.apiKey.findMany({
    where: { AND: [scopeOf(filter), after] },
    omit: { keyHash: true },
    orderBy: OLDEST_FIRST,
    take: page.limit + 1,
  });
  return listOf(rows, page, apiKeyView);
}

export async function getBankAccount(prisma: PrismaClient, bankAccountId: string): Promise<OperatorBankAccountView> {
  const row = await prisma.bankAccount.findUnique({ where: { id: bankAccountId } });
  if (row === null) throw new AppError('resource_missing', `bank account ${bankAccountId} does not exist`, { param: 'bank-account' });
  return operatorBankAccountView(row);
}

export async function listBankAccounts(prisma: PrismaClient, filter: ListFilter, page: Page): Promise<ListView<OperatorBankAccountView>> {
  await assertOrganisation(prisma, filter.organisationId);
  const after = await afterCursor(page, (id) => prisma.bankAccount.findUnique({ where: { id }, select: { createdAt: true } }), 'bank account');
  const rows = await prisma.bankAccount.findMany({ where: { AND: [scopeOf(filter), after] }, orderBy: OLDEST_FIRST, take: page.limit + 1 });
  return listOf(rows, page, operatorBankAccountView);
}

export async function getBankAdapter(prisma: PrismaClient, adapterId: string): Promise<BankAdapterView> {
  const row = await prisma.bankAdapter.findUnique({
    where: { id: adapterId },
    omit: { secretEncrypted: true },
    include: { accounts: { select: { bankAccountId: true } } },
  });
  if (row === null) throw new AppError('resource_missing', `bank adapter ${adapterId} does not exist`, { param: 'adapter' });
  return toBankAdapterView(row);
}

export async function listBankAdapters(prisma: PrismaClient, page: Page): Promise<ListView<BankAdapterView>> {
  const after = await afterCursor(page, (id) => prisma.bankAdapter.findUnique({ where: { id }, select: { createdAt: true } }), 'bank adapter');
  const rows = await prisma.bankAdapter.findMany({
    where: after,
    omit: { secretEncrypted: true },
    include: { accounts: { select: { bankAccountId: true } } },
    orderBy: OLDEST_FIRST,
    take: page.limit + 1,
  });
  return listOf(rows, page, toBankAdapterView);
}

export async function getUser(prisma: PrismaClient, userId: string): Promise<UserView> {
  const row = await prisma.user.findUnique({ where: { id: userId }, select: userColumns });
  if (row === null) throw new AppError('resource_missing', `user ${userId} does not exist`, { param: 'user' });
  return userView(row);
}

export async function listUsers(prisma: PrismaClient, filter: Pick<ListFilter, 'organisationId'>, page: Page): Promise<ListView<UserView>> {
  await assertOrganisation(prisma, filter.organisationId);
  const after = await afterCursor(page, (id) => prisma.user.findUnique({ where: { id }, select: { createdAt: true } }), 'user');
  const rows = await prisma.user.findMany({ where: { AND: [scopeOf(filter), after] }, select: userColumns, orderBy: OLDEST_FIRST, take: page.limit + 1 });
  return listOf(rows, page, userView);
}

/**
 * A console user's columns for the view: the password hash only to say whether one is set (the
 * view prints a boolean); never the setup token's hash or the TOTP secret.
 */
const userColumns = {
  id: true,
  organisationId: true,
  email: true,
  role: true,
  passwordHash: true,
  passwordSetupExpiresAt: true,
  totpEnabledAt: true,
  createdAt: true,
} as const;
