import { COMMANDS, parseCommandLine } from '../src/cli';
import { expectFailure, runOps, type OpsRun } from './run-ops';

/** Help needs no database: this one is unreachable, so a help path that opened it would fail. */
const NO_DATABASE = 'postgresql://nobody@127.0.0.1:1/none';

const help = (args: readonly string[]) => runOps(NO_DATABASE, args);

/** Runs every argv, a few at a time (each is a process of its own). */
async function runAll(argvs: readonly (readonly string[])[]): Promise<OpsRun[]> {
  const runs: OpsRun[] = [];
  for (let start = 0; start < argvs.length; start += 4) {
    runs.push(...(await Promise.all(argvs.slice(start, start + 4).map(help))));
  }
  return runs;
}

const commands = [...COMMANDS.values()];

test('when ops --help is run, then it exits 0 and lists every command, the exit codes and the environment', async () => {
  const [long, short, word] = await runAll([['--help'], ['-h'], ['help']]);

  for (const run of [long, short, word]) expect({ exitCode: run!.exitCode, stderr: run!.stderr }).toEqual({ exitCode: 0, stderr: '' });
  expect(short!.stdout).toBe(long!.stdout);
  expect(word!.stdout).toBe(long!.stdout);
  for (const definition of commands) expect(long!.stdout).toContain(`  ${definition.name} `);
  for (const exitCode of ['0', '1', '2', '3', '4']) expect(long!.stdout).toMatch(new RegExp(`^  ${exitCode}  \\S`, 'm'));
  for (const variable of ['DATABASE_URL', 'SECRETS_KEY', 'PUBLIC_BASE_URL', 'RABBITMQ_URL', 'AMQP_PREFIX', 'COMMAND_TIMEOUT_MS']) {
    expect(long!.stdout).toContain(variable);
  }
});

/** One command's help as `ops GROUP ACTION --help` makes it, read in this process (a process per command would be slow). */
function helpText(argv: readonly string[]): string {
  const commandLine = parseCommandLine(argv);
  if (commandLine.kind !== 'help') throw new Error(`${argv.join(' ')} did not ask for help`);
  return commandLine.text;
}

test.each(commands.map((definition) => [definition.name, definition] as const))(
  'when ops %s --help is asked for, then it shows its usage and describes every option',
  (_, definition) => {
    const text = helpText([...definition.name.split(' '), '--help']);

    expect(text).toContain(`Usage: ${definition.usage}\n`);
    expect(text).toContain(definition.summary);
    for (const option of definition.options) {
      // A switch (--dedicated) is given without a value.
      const given = option.switch ? `--${option.name}` : `--${option.name} ${option.value}`;
      expect(option.description.length).toBeGreaterThan(10);
      expect(text).toMatch(new RegExp(`^  ${escape(given)} +${escape(option.description)}`, 'm'));
      expect(definition.usage).toContain(given);
    }
    expect(text).toContain('-h, --help');
  },
);

test('when COMMAND --help is run as a process, then it exits 0 and prints the same help, for commands of every group', async () => {
  const sample = ['org list', 'key issue', 'user add', 'bank-account get', 'adapter create', 'statement import', 'settings set', 'shop-order pay'];

  const runs = await runAll(sample.map((name) => [...name.split(' '), '--help']));

  sample.forEach((name, index) => {
    expect({ name, exitCode: runs[index]!.exitCode, stderr: runs[index]!.stderr }).toEqual({ name, exitCode: 0, stderr: '' });
    expect(runs[index]!.stdout).toBe(helpText([...name.split(' '), '--help']));
  });
});

test('when help is asked for a group, with ops help, or after other flags, then it is printed and exits 0', async () => {
  const [group, helpCommand, afterFlags] = await runAll([
    ['adapter', '--help'],
    ['help', 'key', 'issue'],
    ['key', 'issue', '--org', 'org_AAAAAAAAAAAAAAAAAAAAAAAA', '-h'],
  ]);

  expect(group!.exitCode).toBe(0);
  for (const action of ['create', 'bind', 'unbind', 'get', 'list', 'revoke']) expect(group!.stdout).toContain(`  adapter ${action} `);
  expect(helpCommand!.exitCode).toBe(0);
  expect(helpCommand!.stdout).toContain('Usage: ops key issue --org ORG');
  expect(afterFlags!.stdout).toBe(helpCommand!.stdout);
});

test('when a bad option, an unknown command or no command is given, then it exits 2 with a usage_error naming the problem', async () => {
  const [badOption, unknownCommand, unknownAction, noCommand, noAction] = await runAll([
    ['org', 'list', '--colour', 'red'],
    ['orgs', 'list'],
    ['key', 'delete'],
    [],
    ['key'],
  ]);

  expect(expectFailure(badOption!, 2)).toEqual({ code: 'usage_error', message: expect.stringContaining("Unknown option '--colour'") });
  expect(expectFailure(unknownCommand!, 2).message).toContain('unknown command "orgs"');
  expect(expectFailure(unknownAction!, 2).message).toContain('unknown command "key delete"; key has issue, revoke, get, list');
  expect(expectFailure(noCommand!, 2).message).toContain('ops --help');
  expect(expectFailure(noAction!, 2).message).toContain('"key" needs an action');
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
