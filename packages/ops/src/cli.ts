import { parseArgs } from 'node:util';
import {
  ACCOUNT_TYPES,
  API_KEY_PERMISSIONS,
  Amount,
  BankAccountId,
  CreateOrderRequest,
  LIMITS,
  MATCHING_RULES,
  MODES,
  Metadata,
  Timestamp,
  USER_ROLES,
  idPattern,
  type IdKind,
  type MatchingRule,
} from '@pmatch/contracts';
import type { Database, PrismaClient } from '@pmatch/db';
import { STATEMENT_FORMATS } from '@pmatch/bank-ingest';
import { DEAD_LETTERED_QUEUES, type Clock, type SecretBox } from '@pmatch/platform';
import { z } from 'zod';
import { bindBankAdapter, createBankAdapter, revokeBankAdapter, unbindBankAdapter } from './adapters';
import { addLiveBankAccount, addUser, createOrganisation, issueApiKey, revokeApiKey, updateSettings } from './commands';
import { EXIT_CODES, OpsError, usageError } from './failures';
import {
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
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
  type Page,
} from './listings';
import type { MatcherLink } from './matcher-link';
import type { DeadLetterLink } from './dead-letter-link';
import { listDeadLetters, replayDeadLetters } from './dead-letters';
import { resealSecrets } from './secrets';
import { createShopOrder, payShopOrder } from './shop-orders';
import { importStatementFile } from './statements';

/**
 * Turns argv into a validated command (or a help text), before anything touches the database.
 * node:util's parseArgs reads the flags; every command declares each flag's schema and help, and
 * the usage lines and help texts are made from those declarations.
 */

export interface OpsDependencies {
  prisma: PrismaClient;
  /** The same pool as `prisma`, with plain SQL (bank-ingest's storing code needs it). */
  database: Database;
  secretBox: SecretBox;
  clock: Clock;
  publicBaseUrl: string;
  /** Connects on first use: only commands that ask the matcher need the broker. */
  matcher: MatcherLink;
  /** Connects on first use: only the dlq commands need it. */
  deadLetters: DeadLetterLink;
}

export type PreparedCommand = (dependencies: OpsDependencies) => Promise<object>;

/** What argv asks for: a help text to print, or a command to run. */
export type CommandLine = { kind: 'help'; text: string } | { kind: 'run'; run: PreparedCommand };
// Flag schemas. A schema-level message replaces zod's for every issue, a missing value included,
// so those give "is required" themselves; the others get it from the parse-wide map in prepare().
const unlessMissing = (message: string) => (issue: { input: unknown }) => (issue.input === undefined ? 'is required' : message);

const text = (max: number) => z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

const idOf = (kind: IdKind, example: string) => z.string().regex(idPattern(kind), `must be an id like ${example}`);

const oneOf = <Values extends readonly [string, ...string[]]>(values: Values) =>
  z.enum(values, { error: unlessMissing(`must be one of ${values.join(', ')}`) });

const digits = (count: number) => z.string().regex(new RegExp(`^[0-9]{${count}}$`), `must be exactly ${count} digits`);

const booleanText = oneOf(['true', 'false']).transform((value) => value === 'true');

function isMatchingRule(name: string): name is MatchingRule {
  return (MATCHING_RULES as readonly string[]).includes(name);
}

/** "a,b" -> ["a","b"]; "" -> [] (no rule enabled). */
const matchingRuleList = z.string().transform((value, context): MatchingRule[] => {
  const names = value.trim() === '' ? [] : value.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !isMatchingRule(name));
  if (unknown.length > 0) {
    context.addIssue({
      code: 'custom',
      message: `has unknown rule(s) ${unknown.map((n) => JSON.stringify(n)).join(', ')}; allowed: ${MATCHING_RULES.join(', ')} (or "" for none)`,
    });
    return z.NEVER;
  }
  if (new Set(names).size !== names.length) {
    context.addIssue({ code: 'custom', message: 'names a rule more than once' });
    return z.NEVER;
  }
  return names.filter(isMatchingRule);
});

const organisationId = idOf('organisation', 'org_…');
const adapterId = idOf('adapter', 'adp_…');
const mode = oneOf(MODES);
/** One or more `--bank-account ba_…`, each once. */
const bankAccountIds = z
  .array(BankAccountId)
  .min(1, 'is required')
  .refine((ids) => new Set(ids).size === ids.length, 'names an account more than once');

/** A flag value that the API's own schema for the field accepts: one rule for both doors. */
const acceptedBy = (schema: z.ZodType, message: string) => z.string().refine((value) => schema.safeParse(value).success, message);

const AMOUNT_RULE = `must be a whole number from ${LIMITS.amountMin} to ${LIMITS.amountMax}`;
const amountText = z
  .string()
  .regex(/^[0-9]+$/, AMOUNT_RULE)
  .transform(Number)
  .refine((amount) => Amount.safeParse(amount).success, AMOUNT_RULE);

const timestamp = acceptedBy(Timestamp, 'must be an RFC 3339 timestamp with an offset, like 2026-11-22T11:17:01+09:00').transform((value) => new Date(value));

const METADATA_RULE =
  `must be a JSON object of string values with at most ${LIMITS.metadataKeysMax} keys, ` +
  `keys of 1 to ${LIMITS.metadataKeyMax} characters and values of at most ${LIMITS.metadataValueMax} characters`;
const metadataJson = z.string().transform((text, context) => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const parsed = Metadata.safeParse(value);
  if (!parsed.success) {
    context.addIssue({ code: 'custom', message: METADATA_RULE });
    return z.NEVER;
  }
  return parsed.data;
});

const limitText = z
  .string()
  .regex(/^[0-9]+$/, `must be a whole number from 1 to ${LIST_LIMIT_MAX}`)
  .transform(Number)
  .refine((limit) => limit >= 1 && limit <= LIST_LIMIT_MAX, `must be a whole number from 1 to ${LIST_LIMIT_MAX}`)
  .optional();

/** The flags every list command takes, and the page they ask for. */
const pageFlags = <Kind extends IdKind>(kind: Kind, example: string) => ({
  limit: limitText,
  'starting-after': idOf(kind, example).optional(),
});
const pageHelp = (what: string, example: string) => ({
  limit: { value: 'N', description: `at most N ${what} (1 to ${LIST_LIMIT_MAX}; default ${LIST_LIMIT_DEFAULT})` },
  'starting-after': { value: example, description: `start after this one: the last id of the page before (when has_more was true)` },
});
const pageOf = (flags: { limit?: number | undefined; 'starting-after'?: string | undefined }): Page => ({
  limit: flags.limit ?? LIST_LIMIT_DEFAULT,
  ...(flags['starting-after'] === undefined ? {} : { startingAfter: flags['starting-after'] }),
});

/** What `--help` says of one flag. */
export interface OptionHelp {
  /** The value's placeholder or its choices, as the usage line shows it: ORG, test|live. */
  value: string;
  description: string;
}

export interface CommandOption extends OptionHelp {
  name: string;
  required: boolean;
  /** May be given more than once; the value is the list of what was given. */
  repeatable: boolean;
}

export interface CommandDefinition {
  /** "group action", e.g. "key issue". */
  name: string;
  summary: string;
  options: readonly CommandOption[];
  usage: string;
  /** Validates the flag values; the result runs the command. */
  prepare(values: Record<string, string | string[] | undefined>): PreparedCommand;
}

interface CommandSpec<Flags extends z.ZodObject> {
  summary: string;
  flags: Flags;
  /** Every flag's help: the type requires one for each flag of the schema. */
  help: { [Name in keyof Flags['shape'] & string]: OptionHelp };
  repeatable?: readonly (keyof Flags['shape'] & string)[];
  run: (dependencies: OpsDependencies, input: z.output<Flags>) => Promise<object>;
}

function command<Flags extends z.ZodObject>(name: string, spec: CommandSpec<Flags>): CommandDefinition {
  const repeatable: readonly string[] = spec.repeatable ?? [];
  const options = Object.entries(spec.help as Record<string, OptionHelp>).map(([flag, help]): CommandOption => {
    const schema = spec.flags.shape[flag] as z.ZodType;
    return { name: flag, ...help, required: !schema.safeParse(undefined).success, repeatable: repeatable.includes(flag) };
  });
  const usage = [`ops ${name}`, ...options.map(usageOf)].join(' ');
  return {
    name,
    summary: spec.summary,
    options,
    usage,
    prepare(values) {
      const parsed = spec.flags.safeParse(values, { error: (issue) => (issue.input === undefined ? 'is required' : undefined) });
      if (!parsed.success) {
        const problems = parsed.error.issues.map((issue) => (issue.path.length > 0 ? `--${String(issue.path[0])} ${issue.message}` : issue.message));
        throw usageError(problems.join('; '));
      }
      return (dependencies) => spec.run(dependencies, parsed.data);
    },
  };
}

function usageOf(option: CommandOption): string {
  const once = `--${option.name} ${option.value}`;
  const given = option.repeatable ? `${once} [${once} …]` : once;
  return option.required ? given : `[${given}]`;
}

const ORG_HELP = { value: 'ORG', description: 'the organisation (org_…)' };

/** A queue that has a dead-letter queue, by its name without the prefix (or its `.dead` queue's). */
const deadLetteredQueue = z
  .string()
  .transform((name) => name.replace(/\.dead$/, ''))
  .refine((name) => DEAD_LETTERED_QUEUES.includes(name), `must be one of ${DEAD_LETTERED_QUEUES.join(', ')}`);
const QUEUE_HELP = { value: 'QUEUE', description: `only this queue's dead letters: ${DEAD_LETTERED_QUEUES.join(', ')} (or its .dead name); default all` };

const COMMAND_LIST: readonly CommandDefinition[] = [
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
    run: ({ prisma }, flags) =>
      listApiKeys(
        prisma,
        { ...(flags.org === undefined ? {} : { organisationId: flags.org }), ...(flags.mode === undefined ? {} : { mode: flags.mode }) },
        pageOf(flags),
      ),
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
    run: ({ prisma }, flags) => listUsers(prisma, flags.org === undefined ? {} : { organisationId: flags.org }, pageOf(flags)),
  }),
  command('bank-account add', {
    summary: 'Adds a live bank account to an organisation (a test account comes with the first test key).',
    flags: z.strictObject({
      org: organisationId,
      mode: z.literal('live', {
        error: unlessMissing("must be live: an organisation's test bank account is created with its first test key"),
      }),
      'bank-code': digits(4),
      'branch-code': digits(3),
      'account-type': oneOf(ACCOUNT_TYPES).default('ordinary'),
      'account-number': digits(7),
      'holder-name': text(100),
      'bank-name': text(100).optional(),
      'branch-name': text(100).optional(),
    }),
    help: {
      org: ORG_HELP,
      mode: { value: 'live', description: 'live: the one mode an account is added in' },
      'bank-code': { value: '0001', description: 'the bank code (4 digits)' },
      'branch-code': { value: '001', description: 'the branch code (3 digits)' },
      'account-type': { value: ACCOUNT_TYPES.join('|'), description: 'the account type (default ordinary)' },
      'account-number': { value: '1234567', description: 'the account number (7 digits; printed as its last 4)' },
      'holder-name': { value: 'NAME', description: "the holder's name as the bank prints it (1 to 100 characters)" },
      'bank-name': { value: 'NAME', description: "the bank's name (up to 100 characters)" },
      'branch-name': { value: 'NAME', description: "the branch's name (up to 100 characters)" },
    },
    run: ({ prisma }, flags) =>
      addLiveBankAccount(prisma, {
        organisationId: flags.org,
        bankCode: flags['bank-code'],
        branchCode: flags['branch-code'],
        accountType: flags['account-type'],
        accountNumber: flags['account-number'],
        holderName: flags['holder-name'],
        ...(flags['bank-name'] === undefined ? {} : { bankName: flags['bank-name'] }),
        ...(flags['branch-name'] === undefined ? {} : { branchName: flags['branch-name'] }),
      }),
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
    run: ({ prisma }, flags) =>
      listBankAccounts(
        prisma,
        { ...(flags.org === undefined ? {} : { organisationId: flags.org }), ...(flags.mode === undefined ? {} : { mode: flags.mode }) },
        pageOf(flags),
      ),
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
  command('secrets reseal', {
    summary: 'Seals every stored secret again under SECRETS_KEY (after a rotation; the old key stays in SECRETS_KEYS_OLD until this has run).',
    flags: z.strictObject({}),
    help: {},
    run: ({ prisma, secretBox }) => resealSecrets(prisma, secretBox),
  }),
  command('statement import', {
    summary: "Imports a bank statement file with bank-ingest's checks; a failed check stores nothing.",
    flags: z.strictObject({ 'bank-account': bankAccountIds, file: text(4096), format: oneOf(STATEMENT_FORMATS).optional() }),
    help: {
      'bank-account': { value: 'BA', description: 'a live account the file may name (ba_…); repeat for several' },
      file: { value: 'F', description: 'the statement file' },
      format: { value: STATEMENT_FORMATS.join('|'), description: 'its format (default: recognised from the content)' },
    },
    repeatable: ['bank-account'],
    run: ({ database, clock }, flags) =>
      importStatementFile(
        database,
        { bankAccountIds: flags['bank-account'], file: flags.file, ...(flags.format === undefined ? {} : { format: flags.format }) },
        clock,
      ),
  }),
  command('settings set', {
    summary: "Changes an organisation's settings of one mode; what is not given keeps its value.",
    flags: z
      .strictObject({
        org: organisationId,
        mode,
        'auto-confirm-late-orders': booleanText.optional(),
        'matching-rules': matchingRuleList.optional(),
      })
      .refine((flags) => flags['auto-confirm-late-orders'] !== undefined || flags['matching-rules'] !== undefined, {
        message: 'nothing to set: give --auto-confirm-late-orders and/or --matching-rules',
      }),
    help: {
      org: ORG_HELP,
      mode: { value: 'test|live', description: 'the mode whose settings change' },
      'auto-confirm-late-orders': { value: 'true|false', description: 'confirm, rather than hold, an unmatched deposit that exactly one late order explains' },
      'matching-rules': { value: 'a,b', description: `the matching rules on, comma-separated (${MATCHING_RULES.join(', ')}; "" for none)` },
    },
    run: ({ prisma, clock }, flags) =>
      updateSettings(
        prisma,
        {
          organisationId: flags.org,
          mode: flags.mode,
          ...(flags['auto-confirm-late-orders'] === undefined ? {} : { autoConfirmLateOrders: flags['auto-confirm-late-orders'] }),
          ...(flags['matching-rules'] === undefined ? {} : { matchingRules: flags['matching-rules'] }),
        },
        clock,
      ),
  }),
  command('shop-order create', {
    summary: 'Creates an order as a shop platform does ("source": "shop"), checked as POST /v1/orders checks one.',
    flags: z.strictObject({
      org: organisationId,
      mode,
      amount: amountText,
      'payer-name': acceptedBy(CreateOrderRequest.shape.payer_name, `must be at most ${LIMITS.payerNameMax} characters and not empty or only spaces`),
      'external-id': acceptedBy(CreateOrderRequest.shape.external_id, `must be 1 to ${LIMITS.externalIdMax} characters`),
      'item-name': acceptedBy(CreateOrderRequest.shape.item_name, `must be 1 to ${LIMITS.itemNameMax} characters`),
      'bank-account': BankAccountId.optional(),
      'ordered-at': timestamp.optional(),
      'expires-at': timestamp.optional(),
      metadata: metadataJson.optional(),
    }),
    help: {
      org: ORG_HELP,
      mode: { value: 'test|live', description: "the order's mode" },
      amount: { value: 'N', description: `the amount in yen (${LIMITS.amountMin} to ${LIMITS.amountMax})` },
      'payer-name': { value: 'NAME', description: "the payer's name as the buyer gave it" },
      'external-id': { value: 'EXT', description: "the shop's own order id, unique per organisation and mode" },
      'item-name': { value: 'ITEM', description: 'what was bought' },
      'bank-account': { value: 'BA', description: "the account to pay into (default: the mode's only account)" },
      'ordered-at': { value: 'TS', description: 'when it was ordered, RFC 3339 with an offset (default now)' },
      'expires-at': { value: 'TS', description: "when it expires, RFC 3339 with an offset (default: the API's default lifetime from now)" },
      metadata: { value: 'JSON', description: 'a JSON object of string values' },
    },
    run: ({ prisma, clock, publicBaseUrl }, flags) =>
      createShopOrder(
        prisma,
        {
          organisationId: flags.org,
          mode: flags.mode,
          amount: flags.amount,
          payerName: flags['payer-name'],
          externalId: flags['external-id'],
          itemName: flags['item-name'],
          ...(flags['bank-account'] === undefined ? {} : { bankAccountId: flags['bank-account'] }),
          ...(flags['ordered-at'] === undefined ? {} : { orderedAt: flags['ordered-at'] }),
          ...(flags['expires-at'] === undefined ? {} : { expiresAt: flags['expires-at'] }),
          ...(flags.metadata === undefined ? {} : { metadata: flags.metadata }),
        },
        publicBaseUrl,
        clock,
      ),
  }),
  command('shop-order pay', {
    summary: 'Reports a shop order paid by the platform: the matcher marks it paid_outside (needs RabbitMQ).',
    flags: z.strictObject({ order: idOf('order', 'ord_…'), 'paid-at': timestamp.optional() }),
    help: {
      order: { value: 'ORD', description: "the order's id (ord_…); it must have come from a shop platform" },
      'paid-at': { value: 'TS', description: 'when it was paid, RFC 3339 with an offset (default now)' },
    },
    run: ({ prisma, matcher }, flags) =>
      payShopOrder(prisma, matcher, { orderId: flags.order, ...(flags['paid-at'] === undefined ? {} : { paidAt: flags['paid-at'] }) }),
  }),
  command('dlq list', {
    summary: 'Lists the dead-letter queues with their counts and first messages, leaving every message where it is (needs RabbitMQ).',
    flags: z.strictObject({ queue: deadLetteredQueue.optional(), limit: limitText }),
    help: {
      queue: QUEUE_HELP,
      limit: { value: 'N', description: `at most N messages shown per queue (1 to ${LIST_LIMIT_MAX}; default ${LIST_LIMIT_DEFAULT}); the count is of all` },
    },
    run: ({ deadLetters }, flags) =>
      listDeadLetters(deadLetters, { ...(flags.queue === undefined ? {} : { queue: flags.queue }), limit: flags.limit ?? LIST_LIMIT_DEFAULT }),
  }),
  command('dlq replay', {
    summary:
      "Moves dead letters back to their original queue (all, one queue's, or one message), each published and confirmed before it is taken off (needs RabbitMQ).",
    flags: z.strictObject({ queue: deadLetteredQueue.optional(), 'message-id': text(255).optional() }),
    help: {
      queue: QUEUE_HELP,
      'message-id': { value: 'ID', description: 'only the message with this id (as dlq list shows it)' },
    },
    run: ({ deadLetters }, flags) =>
      replayDeadLetters(deadLetters, {
        ...(flags.queue === undefined ? {} : { queue: flags.queue }),
        ...(flags['message-id'] === undefined ? {} : { messageId: flags['message-id'] }),
      }),
  }),
];

/** Every command, in the order `ops --help` lists them. */
export const COMMANDS: ReadonlyMap<string, CommandDefinition> = new Map(COMMAND_LIST.map((definition) => [definition.name, definition]));

const GROUPS: readonly string[] = [...new Set(COMMAND_LIST.map((definition) => definition.name.split(' ')[0] ?? ''))];

const isHelpFlag = (arg: string) => arg === '--help' || arg === '-h';

/**
 * `ops --help`, `ops help [GROUP [ACTION]]`, `ops GROUP --help` and `ops GROUP ACTION … --help`
 * print help; anything else must name a command and give it valid flags.
 */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const [first = '', second = '', ...rest] = argv;
  if (argv.length === 0) throw usageError('no command given; ops --help lists the commands');
  if (isHelpFlag(first)) return { kind: 'help', text: toolHelp() };
  if (first === 'help') return { kind: 'help', text: helpFor(argv.slice(1)) };
  if (!GROUPS.includes(first)) throw usageError(`unknown command "${first}"; groups: ${GROUPS.join(', ')} (ops --help lists the commands)`);
  if (second === '' || isHelpFlag(second)) {
    if (isHelpFlag(second)) return { kind: 'help', text: groupHelp(first) };
    throw usageError(`"${first}" needs an action: ${actionsOf(first).join(', ')} (ops ${first} --help)`);
  }
  const found = COMMANDS.get(`${first} ${second}`);
  if (found === undefined) {
    throw usageError(`unknown command "${first} ${second}"; ${first} has ${actionsOf(first).join(', ')} (ops ${first} --help)`);
  }
  if (rest.some(isHelpFlag)) return { kind: 'help', text: commandHelp(found) };
  try {
    return { kind: 'run', run: found.prepare(flagValues(found, rest)) };
  } catch (error) {
    if (error instanceof OpsError && error.code === 'usage_error') {
      throw usageError(`${error.message} (usage: ${found.usage})`);
    }
    throw error;
  }
}

function actionsOf(group: string): string[] {
  return COMMAND_LIST.filter((definition) => definition.name.startsWith(`${group} `)).map((definition) => definition.name.slice(group.length + 1));
}

function helpFor(names: readonly string[]): string {
  const [group, action] = names;
  if (group === undefined) return toolHelp();
  if (!GROUPS.includes(group)) throw usageError(`unknown command "${group}"; groups: ${GROUPS.join(', ')}`);
  if (action === undefined) return groupHelp(group);
  const found = COMMANDS.get(`${group} ${action}`);
  if (found === undefined) throw usageError(`unknown command "${group} ${action}"; ${group} has ${actionsOf(group).join(', ')}`);
  return commandHelp(found);
}

/** Two columns: the left padded to its longest entry. */
function table(rows: readonly [string, string][]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}

function commandList(definitions: readonly CommandDefinition[]): string[] {
  return table(definitions.map((definition) => [definition.name, definition.summary]));
}

const OUTPUT_AND_EXIT_CODES = [
  'Output: one JSON object on stdout, exit 0. A list is {"object":"list","data":[…],"has_more":…},',
  'oldest first; --starting-after with the last id gives the next page. No command prints a key',
  "hash, a password or a sealed secret; an API key's or adapter's secret is printed once, when made.",
  '',
  'Errors: one line of JSON on stderr, nothing on stdout:',
  '  {"error":{"code":"…","message":"…","param":"…"}}   (param: the option at fault, when one is)',
  '',
  'Exit codes:',
  ...table([
    [String(EXIT_CODES.ok), 'done'],
    [String(EXIT_CODES.failed), 'anything else: database or RabbitMQ unreachable, the matcher did not answer, invalid configuration, a bug'],
    [String(EXIT_CODES.usage), 'the input is wrong: the command line (code usage_error) or a value the data refuses'],
    [String(EXIT_CODES.notFound), 'an id names nothing (code resource_missing)'],
    [String(EXIT_CODES.conflict), 'it already exists (already_exists), or the object no longer allows the change'],
  ]),
];

function toolHelp(): string {
  return [
    'ops: the operator CLI of the payment matching service.',
    '',
    'Usage: ops GROUP ACTION [--option VALUE …]',
    '       ops GROUP ACTION --help    one command and its options',
    '       ops GROUP --help           the commands of a group',
    '       ops --help                 this text (also: ops help [GROUP [ACTION]])',
    '',
    'Commands:',
    ...commandList(COMMAND_LIST),
    '',
    ...OUTPUT_AND_EXIT_CODES,
    '',
    'Environment:',
    ...table([
      ['DATABASE_URL', 'PostgreSQL, as the role pmatch_ops (default postgresql://postgres@127.0.0.1:5432/matching)'],
      ['SECRETS_KEY', "the services' key that seals adapter secrets (required with NODE_ENV=production)"],
      ['PUBLIC_BASE_URL', "where payment pages are served: a shop order's payment_url (default http://localhost:3000)"],
      ['RABBITMQ_URL', 'shop-order pay and dlq only: the broker (default amqp://guest:guest@127.0.0.1:5672)'],
      ['AMQP_PREFIX', "shop-order pay and dlq only: the deployment's broker name prefix (default empty)"],
      ['COMMAND_TIMEOUT_MS', "shop-order pay only: how long to wait for the matcher's answer (default 10000)"],
    ]),
    '',
  ].join('\n');
}

function groupHelp(group: string): string {
  return [
    `Usage: ops ${group} ACTION [--option VALUE …]`,
    '',
    'Commands:',
    ...commandList(COMMAND_LIST.filter((definition) => definition.name.startsWith(`${group} `))),
    '',
    `ops ${group} ACTION --help shows one command's options.`,
    '',
  ].join('\n');
}

function commandHelp(definition: CommandDefinition): string {
  const options: [string, string][] = definition.options.map((option) => [
    `--${option.name} ${option.value}`,
    `${option.description}${option.required ? '; required' : ''}${option.repeatable ? '; may be repeated' : ''}`,
  ]);
  return [
    `Usage: ${definition.usage}`,
    '',
    definition.summary,
    '',
    'Options:',
    ...table([...options, ['-h, --help', 'print this help']]),
    '',
    ...OUTPUT_AND_EXIT_CODES,
    '',
  ].join('\n');
}

/** Unknown flags, positionals, a flag without its value, or one given twice (unless repeatable): all rejected. */
function flagValues(definition: CommandDefinition, args: string[]): Record<string, string | string[] | undefined> {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({
      args,
      options: Object.fromEntries(definition.options.map((option) => [option.name, { type: 'string', multiple: true }] as const)),
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    // node:util's messages are clear but some span several lines.
    throw usageError(error instanceof Error ? error.message.replace(/\s*\n\s*/g, ' ') : String(error));
  }
  return Object.fromEntries(
    definition.options.map((option) => {
      const given = values[option.name] as string[] | undefined;
      if (option.repeatable) return [option.name, given];
      if (given !== undefined && given.length > 1) throw usageError(`--${option.name} is given more than once`);
      return [option.name, given?.[0]];
    }),
  );
}
