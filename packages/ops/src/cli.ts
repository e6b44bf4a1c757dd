import { parseArgs } from 'node:util';
import { ACCOUNT_COMMANDS } from './cli-commands-accounts';
import { OPERATION_COMMANDS } from './cli-commands-operations';
import { WEBHOOK_COMMANDS } from './cli-commands-webhooks';
import type { CommandDefinition, CommandLine } from './cli-definition';
import { EXIT_CODES, OpsError, usageError } from './failures';

// The command line: argv to a validated command (or a help text) before anything touches the
// database. node:util's parseArgs reads the flags; each command declares every flag's schema and
// help (cli-definition.ts), and the usage lines and help texts are made from those declarations.

const COMMAND_LIST: readonly CommandDefinition[] = [...ACCOUNT_COMMANDS, ...OPERATION_COMMANDS, ...WEBHOOK_COMMANDS];

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
  'oldest first; --starting-after with the last id gives the next page. webhooks listen prints one',
  'JSON object a line as it goes, until stopped (Ctrl-C), then exits 0. No command prints a key',
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
      ['PAYMENTS_API_URL', 'webhooks listen only: orders-api, without /v1 (default http://localhost:3000)'],
      ['PAYMENTS_API_KEY', 'webhooks listen only: the API key whose events are followed'],
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
    option.switch ? `--${option.name}` : `--${option.name} ${option.value}`,
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
      options: Object.fromEntries(
        definition.options.map((option) => [
          option.name,
          option.switch ? ({ type: 'boolean', multiple: true } as const) : ({ type: 'string', multiple: true } as const),
        ]),
      ),
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    // node:util's messages are clear but some span several lines.
    throw usageError(error instanceof Error ? error.message.replace(/\s*\n\s*/g, ' ') : String(error));
  }
  return Object.fromEntries(
    definition.options.map((option) => {
      const raw = values[option.name] as (string | boolean)[] | undefined;
      const given = raw?.map(String);
      if (option.repeatable) return [option.name, given];
      if (given !== undefined && given.length > 1) throw usageError(`--${option.name} is given more than once`);
      return [option.name, given?.[0]];
    }),
  );
}
