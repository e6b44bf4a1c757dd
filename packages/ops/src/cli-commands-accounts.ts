import { ACCOUNT_TYPES, API_KEY_PERMISSIONS, BankAccountId, USER_ROLES } from '@pmatch/contracts';
import { consecutiveAccountNumbers, LIVE_BANK_ACCOUNTS_ADDED_MAX } from '@pmatch/db';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { command, type CommandDefinition } from './cli-definition';
import { usageError } from './failures';

/** At most this many dedicated accounts in one `bank-account add` (as on the console). */
const DEDICATED_COUNT_MAX = LIVE_BANK_ACCOUNTS_ADDED_MAX;
const countText = z
  .string()
  .regex(/^[0-9]+$/, `must be a whole number from 1 to ${DEDICATED_COUNT_MAX}`)
  .transform(Number)
  .refine((count) => count >= 1 && count <= DEDICATED_COUNT_MAX, `must be a whole number from 1 to ${DEDICATED_COUNT_MAX}`);

/** The account numbers of a --numbers-file: one 7-digit number a line; blank lines are skipped. */
async function accountNumbersOf(file: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw usageError(`--numbers-file cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
  const numbers = text.split(/\r?\n/).map((line) => line.trim());
  const bad = numbers.findIndex((line) => line !== '' && !/^[0-9]{7}$/.test(line));
  if (bad >= 0) throw usageError(`--numbers-file line ${bad + 1} is not a 7-digit account number`);
  const given = numbers.filter((line) => line !== '');
  if (given.length === 0 || given.length > DEDICATED_COUNT_MAX) throw usageError(`--numbers-file must hold 1 to ${DEDICATED_COUNT_MAX} numbers`);
  return given;
}
import {
  adapterId,
  bankAccountIds,
  booleanText,
  digits,
  idOf,
  mode,
  oneOf,
  ORG_HELP,
  organisationId,
  pageFlags,
  pageHelp,
  filterOf,
  pageOf,
  text,
  unlessMissing,
} from './cli-flags';
import { bindBankAdapter, createBankAdapter, revokeBankAdapter, unbindBankAdapter } from './adapters';
import { addDedicatedBankAccounts, addLiveBankAccount, addUser, createOrganisation, issueApiKey, resetUser, revokeApiKey } from './commands';
import {
  getApiKey,
  getBankAccount,
  getBankAdapter,
  getOrganisation,
  getUser,
  listApiKeys,
  listBankAccounts,
  listBankAdapters,
  listOrganisations,
  listUsers,
} from './listings';

/** Organisations, their API keys, users, bank accounts and bank adapters. */
export const ACCOUNT_COMMANDS: readonly CommandDefinition[] = [
  command('org create', {
    summary: 'Creates an organisation (a merchant) with default settings in both modes.',
    flags: z.strictObject({
      name: text(255),
      'owner-email': z.email({ error: unlessMissing('must be an e-mail address') }),
    }),
    help: {
      name: { value: 'NAME', description: 'its name (1 to 255 characters)' },
      'owner-email': { value: 'EMAIL', description: "the owner's e-mail address, where notices about its webhook endpoints go" },
    },
    run: ({ prisma }, flags) => createOrganisation(prisma, { name: flags.name, ownerEmail: flags['owner-email'] }),
  }),
  command('org get', {
    summary: 'Prints one organisation.',
    flags: z.strictObject({ org: organisationId }),
    help: { org: ORG_HELP },
    run: ({ prisma }, flags) => getOrganisation(prisma, flags.org),
  }),
  command('org list', {
    summary: 'Lists organisations, oldest first.',
    flags: z.strictObject(pageFlags('organisation', 'ORG')),
    help: pageHelp('organisations', 'ORG'),
    run: ({ prisma }, flags) => listOrganisations(prisma, pageOf(flags)),
  }),
  command('key issue', {
    summary: 'Issues an API key and prints its text, this once: the database keeps only its hash and a hint.',
    flags: z.strictObject({
      org: organisationId,
      mode,
      name: text(100),
      permission: oneOf(API_KEY_PERMISSIONS).default('read_write'),
      'bank-account': BankAccountId.optional(),
    }),
    help: {
      org: ORG_HELP,
      mode: { value: 'test|live', description: "the key's mode; the first test key also creates the organisation's test bank account" },
      name: { value: 'NAME', description: 'a name to tell keys apart (1 to 100 characters)' },
      permission: { value: API_KEY_PERMISSIONS.join('|'), description: 'what the key may do (default read_write)' },
      'bank-account': { value: 'BA', description: 'live keys only: limits the key to this live account of the organisation (ba_…)' },
    },
    run: ({ prisma }, flags) =>
      issueApiKey(prisma, {
        organisationId: flags.org,
        mode: flags.mode,
        name: flags.name,
        permission: flags.permission,
        ...(flags['bank-account'] === undefined ? {} : { bankAccountId: flags['bank-account'] }),
      }),
  }),
  command('key revoke', {
    summary: 'Revokes an API key at once; revoking it again keeps the first time.',
    flags: z.strictObject({ key: idOf('apiKey', 'key_…') }),
    help: { key: { value: 'KEY_ID', description: "the key's id (key_…), not its text" } },
    run: ({ prisma, clock }, flags) => revokeApiKey(prisma, { keyId: flags.key }, clock),
  }),
  command('key get', {
    summary: 'Prints one API key: its hint (svc_test_...abcd), never its text or hash.',
    flags: z.strictObject({ key: idOf('apiKey', 'key_…') }),
    help: { key: { value: 'KEY_ID', description: "the key's id (key_…)" } },
    run: ({ prisma }, flags) => getApiKey(prisma, flags.key),
  }),
  command('key list', {
    summary: 'Lists API keys (revoked ones too), oldest first.',
    flags: z.strictObject({ org: organisationId.optional(), mode: mode.optional(), ...pageFlags('apiKey', 'KEY_ID') }),
    help: {
      org: { value: 'ORG', description: "only this organisation's keys" },
      mode: { value: 'test|live', description: 'only keys of this mode' },
      ...pageHelp('keys', 'KEY_ID'),
    },
    run: ({ prisma }, flags) => listApiKeys(prisma, filterOf(flags), pageOf(flags)),
  }),
  command('user add', {
    summary: 'Adds a person of the seller console and prints a one-time password-setup link (24 hours).',
    flags: z.strictObject({
      org: organisationId,
      email: z.email({ error: unlessMissing('must be an e-mail address') }).max(254, 'must be at most 254 characters'),
      role: oneOf(USER_ROLES),
    }),
    help: {
      org: ORG_HELP,
      email: { value: 'EMAIL', description: 'the address they log in with (unique across organisations)' },
      role: { value: USER_ROLES.join('|'), description: 'what they may do in the console' },
    },
    run: ({ prisma, clock, publicBaseUrl }, flags) =>
      addUser(prisma, { organisationId: flags.org, email: flags.email, role: flags.role }, publicBaseUrl, clock),
  }),
  command('user reset', {
    summary:
      "Resets a person's console access (unlocks someone locked out): ends their sessions, removes their password, second factor and recovery codes, and prints a new one-time set-up link (24 hours).",
    flags: z.strictObject({ user: idOf('user', 'usr_…') }),
    help: { user: { value: 'USER', description: "the user's id (usr_…; `user list --org ORG` finds it)" } },
    run: ({ prisma, clock, publicBaseUrl }, flags) => resetUser(prisma, flags.user, publicBaseUrl, clock),
  }),
  command('user get', {
    summary: 'Prints one console user: whether a password and a second factor are set, never either.',
    flags: z.strictObject({ user: idOf('user', 'usr_…') }),
    help: { user: { value: 'USER', description: "the user's id (usr_…)" } },
    run: ({ prisma }, flags) => getUser(prisma, flags.user),
  }),
  command('user list', {
    summary: 'Lists console users, oldest first.',
    flags: z.strictObject({ org: organisationId.optional(), ...pageFlags('user', 'USER') }),
    help: { org: { value: 'ORG', description: "only this organisation's users" }, ...pageHelp('users', 'USER') },
    run: ({ prisma }, flags) => listUsers(prisma, filterOf(flags), pageOf(flags)),
  }),
  command('bank-account add', {
    summary:
      'Adds a live bank account to an organisation (a test account comes with the first test key); with --dedicated, dedicated transfer accounts (振込専用口座): --count consecutive numbers from --account-number, or the numbers of --numbers-file.',
    flags: z
      .strictObject({
        org: organisationId,
        mode: z.literal('live', {
          error: unlessMissing("must be live: an organisation's test bank account is created with its first test key"),
        }),
        'bank-code': digits(4),
        'branch-code': digits(3),
        'account-type': oneOf(ACCOUNT_TYPES).default('ordinary'),
        'account-number': digits(7).optional(),
        'holder-name': text(100),
        'bank-name': text(100).optional(),
        'branch-name': text(100).optional(),
        dedicated: booleanText.optional(),
        count: countText.optional(),
        'numbers-file': text(4096).optional(),
      })
      .superRefine((flags, context) => {
        const problem = (path: string, message: string) => context.addIssue({ code: 'custom', path: [path], message });
        if (flags['numbers-file'] !== undefined && flags['account-number'] !== undefined) problem('numbers-file', 'and --account-number exclude each other');
        else if (flags['numbers-file'] === undefined && flags['account-number'] === undefined) problem('account-number', 'is required');
        if (flags.dedicated !== true && flags.count !== undefined) problem('count', 'is only for --dedicated');
        if (flags.dedicated !== true && flags['numbers-file'] !== undefined) problem('numbers-file', 'is only for --dedicated');
        if (flags['numbers-file'] !== undefined && flags.count !== undefined) problem('count', 'is only with --account-number');
      }),
    switches: ['dedicated'],
    help: {
      org: ORG_HELP,
      mode: { value: 'live', description: 'live: the one mode an account is added in' },
      'bank-code': { value: '0001', description: 'the bank code (4 digits)' },
      'branch-code': { value: '001', description: 'the branch code (3 digits)' },
      'account-type': { value: ACCOUNT_TYPES.join('|'), description: 'the account type (default ordinary)' },
      'account-number': { value: '1234567', description: 'the account number (7 digits; printed as its last 4); the first of --count' },
      'holder-name': { value: 'NAME', description: "the holder's name as the bank prints it (1 to 100 characters)" },
      'bank-name': { value: 'NAME', description: "the bank's name (up to 100 characters)" },
      'branch-name': { value: 'NAME', description: "the branch's name (up to 100 characters)" },
      dedicated: { value: '', description: 'dedicated transfer accounts (振込専用口座), given to orders one each or to a buyer for good' },
      count: { value: 'N', description: `with --dedicated: N consecutive numbers from --account-number (1 to ${DEDICATED_COUNT_MAX}; default 1)` },
      'numbers-file': { value: 'F', description: 'with --dedicated: a file of account numbers, one a line (7 digits each)' },
    },
    run: async ({ prisma }, flags) => {
      const account = {
        organisationId: flags.org,
        bankCode: flags['bank-code'],
        branchCode: flags['branch-code'],
        accountType: flags['account-type'],
        holderName: flags['holder-name'],
        ...(flags['bank-name'] === undefined ? {} : { bankName: flags['bank-name'] }),
        ...(flags['branch-name'] === undefined ? {} : { branchName: flags['branch-name'] }),
      };
      if (flags.dedicated !== true) return addLiveBankAccount(prisma, { ...account, accountNumber: flags['account-number']! });
      const accountNumbers =
        flags['numbers-file'] === undefined
          ? consecutiveAccountNumbers(flags['account-number']!, flags.count ?? 1)
          : await accountNumbersOf(flags['numbers-file']);
      return addDedicatedBankAccounts(prisma, { ...account, accountNumbers });
    },
  }),
  command('bank-account get', {
    summary: 'Prints one bank account (the number as its last 4 digits) and its organisation.',
    flags: z.strictObject({ 'bank-account': BankAccountId }),
    help: { 'bank-account': { value: 'BA', description: "the account's id (ba_…)" } },
    run: ({ prisma }, flags) => getBankAccount(prisma, flags['bank-account']),
  }),
  command('bank-account list', {
    summary: 'Lists bank accounts, oldest first.',
    flags: z.strictObject({ org: organisationId.optional(), mode: mode.optional(), ...pageFlags('bankAccount', 'BA') }),
    help: {
      org: { value: 'ORG', description: "only this organisation's accounts" },
      mode: { value: 'test|live', description: 'only accounts of this mode' },
      ...pageHelp('accounts', 'BA'),
    },
    run: ({ prisma }, flags) => listBankAccounts(prisma, filterOf(flags), pageOf(flags)),
  }),
  command('adapter create', {
    summary: 'Creates a bank adapter bound to live accounts and prints its signing secret, this once (it is stored sealed).',
    flags: z.strictObject({ name: text(100), 'bank-account': bankAccountIds }),
    help: {
      name: { value: 'NAME', description: 'a name to tell adapters apart (1 to 100 characters)' },
      'bank-account': { value: 'BA', description: 'a live account it may write to (ba_…); repeat for several' },
    },
    repeatable: ['bank-account'],
    run: ({ prisma, secretBox }, flags) => createBankAdapter(prisma, { name: flags.name, bankAccountIds: flags['bank-account'] }, secretBox),
  }),
  command('adapter bind', {
    summary: 'Lets an adapter write to more live accounts; binding one already bound changes nothing.',
    flags: z.strictObject({ adapter: adapterId, 'bank-account': bankAccountIds }),
    help: {
      adapter: { value: 'ADP', description: "the adapter's id (adp_…)" },
      'bank-account': { value: 'BA', description: 'a live account to bind (ba_…); repeat for several' },
    },
    repeatable: ['bank-account'],
    run: ({ prisma }, flags) => bindBankAdapter(prisma, { adapterId: flags.adapter, bankAccountIds: flags['bank-account'] }),
  }),
  command('adapter unbind', {
    summary: 'Stops an adapter writing to accounts (on every bank-ingest replica within ADAPTER_CACHE_MS).',
    flags: z.strictObject({ adapter: adapterId, 'bank-account': bankAccountIds }),
    help: {
      adapter: { value: 'ADP', description: "the adapter's id (adp_…)" },
      'bank-account': { value: 'BA', description: 'an account to unbind (ba_…); repeat for several' },
    },
    repeatable: ['bank-account'],
    run: ({ prisma }, flags) => unbindBankAdapter(prisma, { adapterId: flags.adapter, bankAccountIds: flags['bank-account'] }),
  }),
  command('adapter get', {
    summary: 'Prints one bank adapter and its accounts, never its secret.',
    flags: z.strictObject({ adapter: adapterId }),
    help: { adapter: { value: 'ADP', description: "the adapter's id (adp_…)" } },
    run: ({ prisma }, flags) => getBankAdapter(prisma, flags.adapter),
  }),
  command('adapter list', {
    summary: 'Lists bank adapters (revoked ones too), oldest first.',
    flags: z.strictObject(pageFlags('adapter', 'ADP')),
    help: pageHelp('adapters', 'ADP'),
    run: ({ prisma }, flags) => listBankAdapters(prisma, pageOf(flags)),
  }),
  command('adapter revoke', {
    summary: 'Revokes a bank adapter; revoking it again keeps the first time.',
    flags: z.strictObject({ adapter: adapterId }),
    help: { adapter: { value: 'ADP', description: "the adapter's id (adp_…)" } },
    run: ({ prisma, clock }, flags) => revokeBankAdapter(prisma, { adapterId: flags.adapter }, clock),
  }),
];
