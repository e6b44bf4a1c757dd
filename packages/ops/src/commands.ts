import { AppError, MODES, newId, type AccountType, type ApiKeyPermission, type MatchingRule, type Mode, type Settings, type UserRole } from '@pmatch/contracts';
import {
  insertApiKey,
  insertLiveBankAccounts,
  insertUser,
  passwordSetupUrl,
  resetUserAccess,
  settingsObject,
  type Db,
  type BankAccountRow,
  type OrganisationRow,
  type PrismaClient,
  type Tx,
} from '@pmatch/db';
import { systemClock, type Clock } from '@pmatch/platform';
import { alreadyExists } from './failures';
import {
  issuedApiKeyView,
  operatorBankAccountView,
  organisationView,
  type IssuedApiKeyView,
  type OperatorBankAccountView,
  type OrganisationView,
  type RevokedApiKeyView,
} from './views';

/**
 * The operator's writes (docs/ARCHITECTURE.md "Who writes which table": organisations, api_keys, bank_accounts,
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
  const { row, keyText } = await prisma.$transaction(async (tx) => {
    const organisation = await findOrganisation(tx, input.organisationId);
    if (input.bankAccountId !== undefined) await assertLiveAccountOf(tx, organisation.id, input.bankAccountId);
    return insertApiKey(tx, organisation, { ...input, bankAccountId: input.bankAccountId ?? null });
  });
  return issuedApiKeyView(row, keyText);
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

export async function addLiveBankAccount(prisma: PrismaClient, input: AddLiveBankAccountInput): Promise<OperatorBankAccountView> {
  const [account] = await addLiveBankAccounts(prisma, input, [input.accountNumber], false);
  return operatorBankAccountView(account!);
}

/** Dedicated accounts: the numbers are the bank's, each a bank account of its own with the holder name the bank prints. */
export type AddDedicatedBankAccountsInput = Omit<AddLiveBankAccountInput, 'accountNumber'> & { accountNumbers: string[] };

/**
 * Adds dedicated transfer accounts (振込専用口座) to the organisation's live pool, all at once or
 * none: each a bank account marked dedicated, with its (free) row in dedicated_accounts.
 */
export async function addDedicatedBankAccounts(
  prisma: PrismaClient,
  input: AddDedicatedBankAccountsInput,
): Promise<{ object: 'list'; data: OperatorBankAccountView[] }> {
  if (new Set(input.accountNumbers).size !== input.accountNumbers.length) {
    throw new AppError('parameter_invalid', 'the account numbers repeat a number', { param: 'numbers-file' });
  }
  const accounts = await addLiveBankAccounts(prisma, input, input.accountNumbers, true);
  return { object: 'list', data: accounts.map(operatorBankAccountView) };
}

/** The same addition as the console's (insertLiveBankAccounts); a number the organisation has is `already_exists`, naming them all. */
async function addLiveBankAccounts(
  prisma: PrismaClient,
  input: Omit<AddLiveBankAccountInput, 'accountNumber'>,
  accountNumbers: string[],
  dedicated: boolean,
): Promise<BankAccountRow[]> {
  return prisma.$transaction(async (tx) => {
    const organisation = await findOrganisation(tx, input.organisationId);
    const added = await insertLiveBankAccounts(tx, {
      organisationId: organisation.id,
      bankCode: input.bankCode,
      branchCode: input.branchCode,
      accountType: input.accountType ?? 'ordinary',
      holderName: input.holderName,
      bankName: input.bankName ?? null,
      branchName: input.branchName ?? null,
      accountNumbers,
      dedicated,
    });
    if (added.outcome === 'already_registered') {
      const [shown, more] = [added.accountNumbers.slice(0, 20), added.accountNumbers.length - 20];
      throw alreadyExists(
        `organisation ${organisation.id} already has account ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}; nothing was added`,
        'account-number',
      );
    }
    return added.accounts;
  });
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
  return settingsObject(settings);
}

export async function findOrganisation(db: Db, organisationId: string): Promise<OrganisationRow> {
  const organisation = await db.organisation.findUnique({ where: { id: organisationId } });
  if (organisation === null) {
    throw new AppError('resource_missing', `organisation ${organisationId} does not exist`, { param: 'org' });
  }
  return organisation;
}

export interface AddUserInput {
  organisationId: string;
  email: string;
  role: UserRole;
}

/**
 * Adds a person who may log in to the seller console (the first admin of an organisation comes
 * from here); `password_setup_url` works once, for 24 hours, and is printed only now.
 */
export async function addUser(
  prisma: PrismaClient,
  input: AddUserInput,
  publicBaseUrl: string,
  clock: Clock = systemClock,
): Promise<{ id: string; email: string; role: string; password_setup_url: string }> {
  const email = input.email.trim().toLowerCase();
  const { row, setupToken } = await prisma
    .$transaction(async (tx) => {
      const organisation = await findOrganisation(tx, input.organisationId);
      // The operator sees every organisation: an address active elsewhere could never be activated here.
      const active = await tx.user.findFirst({ where: { email, activatedAt: { not: null }, organisationId: { not: organisation.id } }, select: { id: true } });
      if (active !== null) throw alreadyExists(`${email} is already the console account ${active.id} of another organisation.`, 'email');
      return insertUser(tx, { ...input, email, organisationId: organisation.id }, clock.now());
    })
    .catch((error: unknown) => {
      // insertUser's only refusal of a valid address: the organisation has a user with it.
      if (error instanceof AppError && error.param === 'email') throw alreadyExists(error.message, 'email');
      throw error;
    });
  return { id: row.id, email: row.email, role: row.role, password_setup_url: passwordSetupUrl(publicBaseUrl, setupToken) };
}

/**
 * Resets a person's access to the console (they are locked out: a lost authenticator and recovery
 * codes, a forgotten password): their sessions end, their password, second factor and recovery
 * codes are removed, and a new one-time set-up link (24 hours) is printed, only now. Their wrong
 * log-ins stop counting once they set the new password.
 */
export async function resetUser(
  prisma: PrismaClient,
  userId: string,
  publicBaseUrl: string,
  clock: Clock = systemClock,
): Promise<{ id: string; email: string; role: string; organisation_id: string; password_setup_url: string }> {
  const reset = await prisma.$transaction((tx) => resetUserAccess(tx, userId, clock.now()));
  if (reset === null) throw new AppError('resource_missing', `user ${userId} does not exist`, { param: 'user' });
  const { row, setupToken } = reset;
  return { id: row.id, email: row.email, role: row.role, organisation_id: row.organisationId, password_setup_url: passwordSetupUrl(publicBaseUrl, setupToken) };
}
