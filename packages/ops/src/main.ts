#!/usr/bin/env node
import { createDatabase } from '@pmatch/db';
import { SecretBox, checkDatabaseRole, clockFromEnv, loadConfig } from '@pmatch/platform';
import { parseCommandLine } from './cli';
import { OpsConfig } from './config';
import { EXIT_CODES, failureOf } from './failures';
import { LazyDeadLetterLink } from './dead-letter-link';
import { LazyMatcherLink } from './matcher-link';

/**
 * `ops <group> <action> --flag value …`: one JSON object on stdout and exit 0, or one JSON error
 * on stderr and the exit code of its kind (failures.ts); `--help` prints help and exits 0.
 */
async function main(argv: readonly string[]): Promise<number> {
  try {
    const commandLine = parseCommandLine(argv);
    if (commandLine.kind === 'help') {
      process.stdout.write(commandLine.text);
      return EXIT_CODES.ok;
    }
    const config = loadConfig(OpsConfig);
    // One operator command, one statement at a time: a single connection is enough.
    const database = createDatabase(config.DATABASE_URL, { poolSize: 1 });
    const { prisma } = database;
    const matcher = new LazyMatcherLink();
    const deadLetters = new LazyDeadLetterLink();
    try {
      if (config.NODE_ENV === 'production') await checkDatabaseRole(prisma, 'ops');
      const output = await commandLine.run({
        prisma,
        database,
        secretBox: new SecretBox(config.SECRETS_KEY, config.SECRETS_KEYS_OLD),
        clock: clockFromEnv(),
        publicBaseUrl: config.PUBLIC_BASE_URL,
        matcher,
        deadLetters,
      });
      process.stdout.write(`${JSON.stringify(output)}\n`);
    } finally {
      await matcher.close();
      await deadLetters.close();
      await prisma.$disconnect();
    }
    return EXIT_CODES.ok;
  } catch (error) {
    const { exitCode, body } = failureOf(error);
    process.stderr.write(`${JSON.stringify(body)}\n`);
    return exitCode;
  }
}

// Exit at once: the database driver keeps timers alive for a while after disconnecting, and an
// operator (or a script calling ops in a loop) should not wait for them. Writes to stdout and
// stderr are synchronous for files and pipes, so nothing printed is lost.
void main(process.argv.slice(2)).then((exitCode) => process.exit(exitCode));
