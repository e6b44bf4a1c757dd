import { parseArgs } from 'node:util';
import { ACCOUNT_TYPES, Amount, AppError, BankAccountId, CreateOrderRequest, LIMITS, MODES, Metadata, Timestamp, idPattern, type IdKind } from '@pmatch/contracts';
import type { Database, PrismaClient } from '@pmatch/db';
import { STATEMENT_FORMATS } from '@pmatch/bank-ingest';
import { importStatementFile } from './statements';
import type { Clock, SecretBox } from '@pmatch/platform';
import { z } from 'zod';
import { bindBankAdapter, createBankAdapter, listBankAdapters, revokeBankAdapter, unbindBankAdapter } from './adapters';
import { addLiveBankAccount, addUser, createOrganisation, issueApiKey, revokeApiKey, updateSettings } from './commands';
import type { MatcherLink } from './matcher-link';
import { resealSecrets } from './secrets';
import { createShopOrder, payShopOrder } from './shop-orders';
import { API_KEY_PERMISSIONS, MATCHING_RULES, USER_ROLES, type MatchingRule } from '@pmatch/contracts';

/** Turns argv into a validated command, before anything touches the database. */

export interface OpsDependencies {
  prisma: PrismaClient;
  /** The same pool as `prisma`, with plain SQL (bank-ingest's storing code needs it). */
  database: Database;
  secretBox: SecretBox;
  clock: Clock;
  publicBaseUrl: string;
  /** Connects on first use: only commands that ask the matcher need the broker. */
  matcher: MatcherLink;
}

export type PreparedCommand = (dependencies: OpsDependencies) => Promise<object>;

/** Every mistake in argv: a one-line message, exit 1, no stack trace. */
function usageError(message: string): AppError {
  return new AppError('parameter_invalid', message);
}

// Flag schemas. A schema-level message replaces zod's for every issue, a missing value included,
// so those give "is required" themselves; the others get it from the parse-wide map in prepare().
const unlessMissing = (message: string) => (issue: { input: unknown }) => (issue.input === undefined ? 'is required' : message);

const text = (max: number) =>
  z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

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

const timestamp = acceptedBy(Timestamp, 'must be an RFC 3339 timestamp with an offset, like 2026-11-22T11:17:01+09:00').transform(
  (value) => new Date(value),
);

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

interface Command {
  usage: string;
  flagNames: readonly string[];
  /** Flags that may be given more than once; their value is the list of what was given. */
  repeatable: readonly string[];
  /** Validates the flag values; the result runs the command. */
  prepare(values: Record<string, string | string[] | undefined>): PreparedCommand;
}

function command<Flags extends z.ZodObject>(
  usage: string,
  flags: Flags,
  run: (dependencies: OpsDependencies, input: z.output<Flags>) => Promise<object>,
  repeatable: readonly string[] = [],
): Command {
  return {
    usage,
    flagNames: Object.keys(flags.shape),
    repeatable,
    prepare(values) {
      const parsed = flags.safeParse(values, { error: (issue) => (issue.input === undefined ? 'is required' : undefined) });
      if (!parsed.success) {
        const problems = parsed.error.issues.map((issue) =>
          issue.path.length > 0 ? `--${String(issue.path[0])} ${issue.message}` : issue.message,
        );
        throw usageError(problems.join('; '));
      }
      return (dependencies) => run(dependencies, parsed.data);
    },
  };
}

const COMMANDS: Record<string, Command> = {
  'org create': command(
    'ops org create --name NAME --owner-email EMAIL',
    z.strictObject({
      name: text(255),
      'owner-email': z.email({ error: unlessMissing('must be an e-mail address') }),
    }),
    ({ prisma }, flags) => createOrganisation(prisma, { name: flags.name, ownerEmail: flags['owner-email'] }),
  ),
  'key issue': command(
    'ops key issue --org ORG --mode test|live --name NAME [--permission read_write|read_only] [--bank-account BA]',
    z.strictObject({
      org: organisationId,
      mode,
      name: text(100),
      permission: oneOf(API_KEY_PERMISSIONS).default('read_write'),
      'bank-account': BankAccountId.optional(),
    }),
    ({ prisma }, flags) =>
      issueApiKey(prisma, {
        organisationId: flags.org,
        mode: flags.mode,
        name: flags.name,
        permission: flags.permission,
        ...(flags['bank-account'] === undefined ? {} : { bankAccountId: flags['bank-account'] }),
      }),
  ),
  'user add': command(
    'ops user add --org ORG --email EMAIL --role admin|operator|viewer',
    z.strictObject({
      org: organisationId,
      email: z.email({ error: unlessMissing('must be an e-mail address') }).max(254, 'must be at most 254 characters'),
      role: oneOf(USER_ROLES),
    }),
    ({ prisma, clock, publicBaseUrl }, flags) => addUser(prisma, { organisationId: flags.org, email: flags.email, role: flags.role }, publicBaseUrl, clock),
  ),
  'key revoke': command(
    'ops key revoke --key KEY_ID',
    z.strictObject({ key: idOf('apiKey', 'key_…') }),
    ({ prisma, clock }, flags) => revokeApiKey(prisma, { keyId: flags.key }, clock),
  ),
  'bank-account add': command(
    'ops bank-account add --org ORG --mode live --bank-code 0001 --branch-code 001 [--account-type ordinary|current|savings] --account-number 1234567 --holder-name NAME [--bank-name NAME] [--branch-name NAME]',
    z.strictObject({
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
    ({ prisma }, flags) =>
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
  ),
  'adapter create': command(
    'ops adapter create --name NAME --bank-account BA [--bank-account BA …]',
    z.strictObject({ name: text(100), 'bank-account': bankAccountIds }),
    ({ prisma, secretBox }, flags) => createBankAdapter(prisma, { name: flags.name, bankAccountIds: flags['bank-account'] }, secretBox),
    ['bank-account'],
  ),
  'adapter bind': command(
    'ops adapter bind --adapter ADP --bank-account BA [--bank-account BA …]',
    z.strictObject({ adapter: adapterId, 'bank-account': bankAccountIds }),
    ({ prisma }, flags) => bindBankAdapter(prisma, { adapterId: flags.adapter, bankAccountIds: flags['bank-account'] }),
    ['bank-account'],
  ),
  'adapter unbind': command(
    'ops adapter unbind --adapter ADP --bank-account BA [--bank-account BA …]',
    z.strictObject({ adapter: adapterId, 'bank-account': bankAccountIds }),
    ({ prisma }, flags) => unbindBankAdapter(prisma, { adapterId: flags.adapter, bankAccountIds: flags['bank-account'] }),
    ['bank-account'],
  ),
  'adapter list': command('ops adapter list', z.strictObject({}), ({ prisma }) => listBankAdapters(prisma)),
  'adapter revoke': command(
    'ops adapter revoke --adapter ADP',
    z.strictObject({ adapter: adapterId }),
    ({ prisma, clock }, flags) => revokeBankAdapter(prisma, { adapterId: flags.adapter }, clock),
  ),
  'secrets reseal': command('ops secrets reseal', z.strictObject({}), ({ prisma, secretBox }) => resealSecrets(prisma, secretBox)),
  'statement import': command(
    'ops statement import --bank-account BA [--bank-account BA …] --file F [--format zengin|camt.054|camt.053]',
    z.strictObject({ 'bank-account': bankAccountIds, file: text(4096), format: oneOf(STATEMENT_FORMATS).optional() }),
    ({ database, clock }, flags) =>
      importStatementFile(
        database,
        { bankAccountIds: flags['bank-account'], file: flags.file, ...(flags.format === undefined ? {} : { format: flags.format }) },
        clock,
      ),
    ['bank-account'],
  ),
  'settings set': command(
    'ops settings set --org ORG --mode test|live [--auto-confirm-late-orders true|false] [--matching-rules a,b]',
    z
      .strictObject({
        org: organisationId,
        mode,
        'auto-confirm-late-orders': booleanText.optional(),
        'matching-rules': matchingRuleList.optional(),
      })
      .refine((flags) => flags['auto-confirm-late-orders'] !== undefined || flags['matching-rules'] !== undefined, {
        message: 'nothing to set: give --auto-confirm-late-orders and/or --matching-rules',
      }),
    ({ prisma, clock }, flags) =>
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
  ),
  'shop-order create': command(
    'ops shop-order create --org ORG --mode test|live --amount N --payer-name NAME --external-id EXT --item-name ITEM [--bank-account BA] [--ordered-at TS] [--expires-at TS] [--metadata JSON]',
    z.strictObject({
      org: organisationId,
      mode,
      amount: amountText,
      'payer-name': acceptedBy(
        CreateOrderRequest.shape.payer_name,
        `must be at most ${LIMITS.payerNameMax} characters and not empty or only spaces`,
      ),
      'external-id': acceptedBy(CreateOrderRequest.shape.external_id, `must be 1 to ${LIMITS.externalIdMax} characters`),
      'item-name': acceptedBy(CreateOrderRequest.shape.item_name, `must be 1 to ${LIMITS.itemNameMax} characters`),
      'bank-account': BankAccountId.optional(),
      'ordered-at': timestamp.optional(),
      'expires-at': timestamp.optional(),
      metadata: metadataJson.optional(),
    }),
    ({ prisma, clock, publicBaseUrl }, flags) =>
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
  ),
  'shop-order pay': command(
    'ops shop-order pay --order ORD [--paid-at TS]',
    z.strictObject({ order: idOf('order', 'ord_…'), 'paid-at': timestamp.optional() }),
    ({ prisma, matcher }, flags) =>
      payShopOrder(prisma, matcher, { orderId: flags.order, ...(flags['paid-at'] === undefined ? {} : { paidAt: flags['paid-at'] }) }),
  ),
};

export function prepareCommand(argv: readonly string[]): PreparedCommand {
  const [group = '', action = '', ...flagArgs] = argv;
  const name = `${group} ${action}`;
  const found = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (found === undefined) {
    const given = argv.length === 0 ? 'no command given' : `unknown command "${argv.slice(0, 2).join(' ')}"`;
    throw usageError(`${given}; commands: ${Object.keys(COMMANDS).join(', ')}`);
  }
  try {
    return found.prepare(flagValues(found.flagNames, found.repeatable, flagArgs));
  } catch (error) {
    if (error instanceof AppError) throw usageError(`${error.message} (usage: ${found.usage})`);
    throw error;
  }
}

/** Unknown flags, positionals, a flag without its value, or one given twice (unless repeatable): all rejected. */
function flagValues(flagNames: readonly string[], repeatable: readonly string[], args: string[]): Record<string, string | string[] | undefined> {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({
      args,
      options: Object.fromEntries(flagNames.map((flag) => [flag, { type: 'string', multiple: true }] as const)),
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    // node:util's messages are clear but some span several lines.
    throw usageError(error instanceof Error ? error.message.replace(/\s*\n\s*/g, ' ') : String(error));
  }
  return Object.fromEntries(
    flagNames.map((flag) => {
      const given = values[flag] as string[] | undefined;
      if (repeatable.includes(flag)) return [flag, given];
      if (given !== undefined && given.length > 1) throw usageError(`--${flag} is given more than once`);
      return [flag, given?.[0]];
    }),
  );
}
