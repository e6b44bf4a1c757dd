import { createDatabase, type Database } from '@pmatch/db';
import { SecretBox, checkDatabaseRole, clockFromEnv, loadConfig } from '@pmatch/platform';
import { parseCommandLine } from './cli';
import { OpsConfig } from './config';
import { EXIT_CODES, failureOf } from './failures';
import { LazyDeadLetterLink } from './dead-letter-link';
import { LazyMatcherLink } from './matcher-link';

/** What one command line printed: its JSON object (or help text) on stdout, or its JSON error on stderr with the exit code of its kind. */
export type OpsOutcome = { exitCode: 0; stdout: string } | { exitCode: number; stderr: string };

/**
 * The operator's CLI over one database connection and lazy links to the matcher and the dead-letter queues: `ops` runs one command
 * line through a session; a test system runs many through one. The configuration is read from `env`
 * when the first command needs it, so `--help` and a bad command line work without any.
 */
/** How a command that runs until stopped reports and learns that it is to stop; by default stdout and the process's signals. */
export interface OpsStreams {
  print: (line: object) => void;
  untilStopped: () => AbortSignal;
}

const PROCESS_STREAMS: OpsStreams = {
  print: (line) => process.stdout.write(`${JSON.stringify(line)}\n`),
  untilStopped: () => {
    const stopped = new AbortController();
    const stop = () => stopped.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return stopped.signal;
  },
};

export class OpsSession {
  private opened: { database: Database; config: OpsConfig } | undefined;
  private readonly matcher: LazyMatcherLink;
  private readonly deadLetters: LazyDeadLetterLink;

  constructor(
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly streams: OpsStreams = PROCESS_STREAMS,
  ) {
    this.matcher = new LazyMatcherLink(env);
    this.deadLetters = new LazyDeadLetterLink(env);
  }

  async execute(argv: readonly string[]): Promise<OpsOutcome> {
    try {
      const commandLine = parseCommandLine(argv);
      if (commandLine.kind === 'help') return { exitCode: EXIT_CODES.ok, stdout: commandLine.text };
      const { database, config } = await this.open();
      const output = await commandLine.run({
        prisma: database.prisma,
        database,
        secretBox: new SecretBox(config.SECRETS_KEY, config.SECRETS_KEYS_OLD),
        clock: clockFromEnv(this.env),
        publicBaseUrl: config.PUBLIC_BASE_URL,
        matcher: this.matcher,
        deadLetters: this.deadLetters,
        env: this.env,
        print: this.streams.print,
        untilStopped: this.streams.untilStopped,
      });
      return { exitCode: EXIT_CODES.ok, stdout: `${JSON.stringify(output)}\n` };
    } catch (error) {
      const { exitCode, body } = failureOf(error);
      return { exitCode, stderr: `${JSON.stringify(body)}\n` };
    }
  }

  async close(): Promise<void> {
    await this.matcher.close();
    await this.deadLetters.close();
    await this.opened?.database.prisma.$disconnect();
    this.opened = undefined;
  }

  private async open(): Promise<{ database: Database; config: OpsConfig }> {
    if (this.opened === undefined) {
      const config = loadConfig(OpsConfig, this.env);
      // One operator command, one statement at a time: a single connection is enough.
      const database = createDatabase(config.DATABASE_URL, { poolSize: 1 });
      try {
        if (config.NODE_ENV === 'production') await checkDatabaseRole(database.prisma, 'ops');
      } catch (error) {
        await database.prisma.$disconnect();
        throw error;
      }
      this.opened = { database, config };
    }
    return this.opened;
  }
}
