import { randomInt } from 'node:crypto';
import {
  API_KEY_PREFIX,
  AppError,
  MODES,
  newId,
  randomBase62,
  type AccountType,
  type ApiKeyPermission,
  type BankAccount,
  type MatchingRule,
  type Mode,
  type Settings,
} from '@pmatch/contracts';
import { bankAccountView, settingsView, type Db, type OrganisationRow, type PrismaClient, type Tx } from '@pmatch/db';
import { sha256Hex, systemClock, type Clock } from '@pmatch/platform';
import {
  issuedApiKeyView,
  organisationView,
  type IssuedApiKeyView,
  type OrganisationView,
  type RevokedApiKeyView,
} from './views';

/**
 * The operator's writes (DESIGN §1 "Ownership of writes": organisations, api_keys, bank_accounts,
 * settings, bank adapters). Inputs arrive validated by the CLI; each function returns what the CLI
 * prints.
 */

export interface CreateOrganisationInput {
  name: string;
  ownerEmail: string;
}

export async function createOrganisation(prisma: PrismaClient, input: CreateOrganisationInput): Promise<OrganisationView> {
  const organisation = await prisma.$transaction(async (tx) => {
    const created = await tx.organisation.create({
      data: { id: newId('organisation'), name: input.name, ownerEmail: input.ownerEmail },
    });
    // Settings exist in both modes from the start, so no reader ever has to invent defaults.
    await tx.setting.createMany({ data: MODES.map((mode) => ({ organisationId: created.id, mode })) });
    return created;
  });
  return organisationView(organisation);
}

export interface IssueApiKeyInput {
  organisationId: string;
  mode: Mode;
  name: string;
  permission: ApiKeyPermission;
  /** Live keys only: limits the key to this one account of the organisation. */
  bankAccountId?: string;
}

export async function issueApiKey(prisma: PrismaClient, input: IssueApiKeyInput): Promise<IssuedApiKeyView> {
  if (input.bankAccountId !== undefined && input.mode !== 'live') {
    throw new AppError('parameter_invalid', '--bank-account is only for live keys: a test key uses the test bank account', {
      param: 'bank-account',
    });
  }
  const keyText = API_KEY_PREFIX[input.mode] + randomBase62(32);
  const key = await prisma.$transaction(async (tx) => {
    const organisation = await findOrganisation(tx, input.organisationId);
    if (input.bankAccountId !== undefined) await assertLiveAccountOf(tx, organisation.id, input.bankAccountId);
    if (input.mode === 'test') await ensureTestBankAccount(tx, organisation);
    return tx.apiKey.create({
      data: {
        id: newId('apiKey'),
        organisationId: organisation.id,
        mode: input.mode,
        name: input.name,
        permission: input.permission,
        bankAccountId: input.bankAccountId ?? null,
        keyHash: sha256Hex(keyText),
        keyHint: keyHintOf(keyText, input.mode),
      },
    });
  });
  return issuedApiKeyView(key, keyText);
}

/** Enough to tell keys apart in a list, far too little to use: the prefix and the last 4 characters. */
function keyHintOf(keyText: string, mode: Mode): string {
  return `${API_KEY_PREFIX[mode]}...${keyText.slice(-4)}`;
}

const TEST_BANK_ACCOUNT = {
  bankCode: '9999',
  bankName: 'テスト銀行',
  branchCode: '001',
  branchName: 'テスト支店',
} as const;

/**
 * The organisation's one test account, created with its first test key. ON CONFLICT DO NOTHING
 * (skipDuplicates) against the partial unique index bank_accounts_one_test_account_idx makes two
 * racing first keys share one account instead of failing: a caught unique violation would abort
 * the whole transaction in PostgreSQL.
 */
async function ensureTestBankAccount(tx: Tx, organisation: OrganisationRow): Promise<void> {
  await tx.bankAccount.createMany({
    data: [
      {
        id: newId('bankAccount'),
        organisationId: organisation.id,
        mode: 'test',
        ...TEST_BANK_ACCOUNT,
        accountNumber: String(randomInt(0, 10_000_000)).padStart(7, '0'),
        holderName: organisation.name,
      },
    ],
    skipDuplicates: true,
  });
}

async function assertLiveAccountOf(tx: Tx, organisationId: string, bankAccountId: string): Promise<void> {
  const account = await tx.bankAccount.findFirst({ where: { id: bankAccountId, organisationId, mode: 'live' } });
  if (account === null) {
    throw new AppError('parameter_invalid', `bank account ${bankAccountId} is not a live bank account of organisation ${organisationId}`, {
      param: 'bank-account',
    });
  }
}

export interface RevokeApiKeyInput {
  keyId: string;
}

/** Revoking twice keeps the first revocation time. */
export async function revokeApiKey(prisma: PrismaClient, input: RevokeApiKeyInput, clock: Clock = systemClock): Promise<RevokedApiKeyView> {
  await prisma.apiKey.updateMany({ where: { id: input.keyId, revokedAt: null }, data: { revokedAt: clock.now() } });
  const key = await prisma.apiKey.findUnique({ where: { id: input.keyId }, select: { id: true, revokedAt: true } });
  // After the update every existing key has a revoked_at, so a missing one means a missing key.
  if (key?.revokedAt == null) throw new AppError('resource_missing', `api key ${input.keyId} does not exist`, { param: 'key' });
  return { id: key.id, revoked_at: key.revokedAt.toISOString() };
}

/** Live only: an organisation's test account comes from its first test key. */
export interface AddLiveBankAccountInput {
  organisationId: string;
  bankCode: string;
  branchCode: string;
  /** Default ordinary (普通). */
  accountType?: AccountType;
  accountNumber: string;
  holderName: string;
  bankName?: string;
  branchName?: string;
}

export async function addLiveBankAccount(prisma: PrismaClient, input: AddLiveBankAccountInput): Promise<BankAccount> {
  const account = await prisma.$transaction(async (tx) => {
    const organisation = await findOrganisation(tx, input.organisationId);
    const identity = { bankCode: input.bankCode, branchCode: input.branchCode, accountType: input.accountType ?? 'ordinary', accountNumber: input.accountNumber };
    // The same account twice would make every order without bank_account_id ambiguous.
    const existing = await tx.bankAccount.findFirst({ where: { organisationId: organisation.id, mode: 'live', ...identity } });
    if (existing !== null) {
      throw new AppError('parameter_invalid', `organisation ${organisation.id} already has this account as ${existing.id}`, {
        param: 'account-number',
      });
    }
    return tx.bankAccount.create({
      data: {
        id: newId('bankAccount'),
        organisationId: organisation.id,
        mode: 'live',
        ...identity,
        holderName: input.holderName,
        bankName: input.bankName ?? null,
        branchName: input.branchName ?? null,
      },
    });
  });
  return bankAccountView(account);
}

export interface UpdateSettingsInput {
  organisationId: string;
  mode: Mode;
  /** Left out: unchanged. */
  autoConfirmLateOrders?: boolean;
  /** Left out: unchanged; empty: no rule enabled. */
  matchingRules?: MatchingRule[];
}

export async function updateSettings(prisma: PrismaClient, input: UpdateSettingsInput, clock: Clock = systemClock): Promise<Settings> {
  const settings = await prisma.$transaction(async (tx) => {
    const organisation = await findOrganisation(tx, input.organisationId);
    // Prisma leaves a field whose value is undefined untouched. The row exists: createOrganisation
    // writes both modes' settings with the organisation.
    return tx.setting.update({
      where: { organisationId_mode: { organisationId: organisation.id, mode: input.mode } },
      data: { autoConfirmLateOrders: input.autoConfirmLateOrders, matchingRules: input.matchingRules, updatedAt: clock.now() },
    });
  });
  return settingsView(settings);
}

export async function findOrganisation(db: Db, organisationId: string): Promise<OrganisationRow> {
  const organisation = await db.organisation.findUnique({ where: { id: organisationId } });
  if (organisation === null) {
    throw new AppError('resource_missing', `organisation ${organisationId} does not exist`, { param: 'org' });
  }
  return organisation;
}
