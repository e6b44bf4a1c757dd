import type { Database, PrismaClient } from '@pmatch/db';
import { type Clock, type SecretBox } from '@pmatch/platform';
import { type z } from 'zod';
import { usageError } from './failures';
import type { MatcherLink } from './matcher-link';
import type { DeadLetterLink } from './dead-letter-link';

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
  /** The CLI's environment (`webhooks listen` reads the API's address and key from it). */
  env: NodeJS.ProcessEnv;
  /** Writes one line of JSON at once: how a command that runs until stopped reports as it goes. */
  print: (line: object) => void;
  /**
   * A signal aborted when the operator stops the CLI (SIGINT, SIGTERM). Only a command that runs
   * until stopped asks for it: any other still ends at a Ctrl-C as a process does.
   */
  untilStopped: () => AbortSignal;
}

export type PreparedCommand = (dependencies: OpsDependencies) => Promise<object>;

/** What argv asks for: a help text to print, or a command to run. */
export type CommandLine = { kind: 'help'; text: string } | { kind: 'run'; run: PreparedCommand };

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
  /** Given alone, without a value (`--dedicated`): its value is then "true". */
  switch: boolean;
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
  /** Flags given without a value; the schema sees "true" for one given. */
  switches?: readonly (keyof Flags['shape'] & string)[];
  run: (dependencies: OpsDependencies, input: z.output<Flags>) => Promise<object>;
}

export function command<Flags extends z.ZodObject>(name: string, spec: CommandSpec<Flags>): CommandDefinition {
  const repeatable: readonly string[] = spec.repeatable ?? [];
  const switches: readonly string[] = spec.switches ?? [];
  const options = Object.entries(spec.help as Record<string, OptionHelp>).map(([flag, help]): CommandOption => {
    const schema = spec.flags.shape[flag] as z.ZodType;
    return { name: flag, ...help, required: !schema.safeParse(undefined).success, repeatable: repeatable.includes(flag), switch: switches.includes(flag) };
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

export function usageOf(option: CommandOption): string {
  const once = option.switch ? `--${option.name}` : `--${option.name} ${option.value}`;
  const given = option.repeatable ? `${once} [${once} …]` : once;
  return option.required ? given : `[${given}]`;
}
