import { AppError } from '@pmatch/contracts';
import { Prisma, createDatabase } from '@pmatch/db';
import { ConfigError, SecretBox, WrongDatabaseRole, checkDatabaseRole, clockFromEnv, loadConfig } from '@pmatch/platform';
import { prepareCommand } from './cli';
import { OpsConfig } from './config';
import { LazyMatcherLink } from './matcher-link';

/** `ops <group> <action> --flag value …`: one JSON object on stdout, or one line on stderr and exit 1. */
async function main(argv: readonly string[]): Promise<number> {
  try {
    const run = prepareCommand(argv);
    const config = loadConfig(OpsConfig);
    // One operator command, one statement at a time: a single connection is enough.
    const database = createDatabase(config.DATABASE_URL, { poolSize: 1 });
    const { prisma } = database;
    const matcher = new LazyMatcherLink();
    try {
      if (config.NODE_ENV === 'production') await checkDatabaseRole(prisma, 'ops');
      const output = await run({
        prisma,
        database,
        secretBox: new SecretBox(config.SECRETS_KEY, config.SECRETS_KEYS_OLD),
        clock: clockFromEnv(),
        publicBaseUrl: config.PUBLIC_BASE_URL,
        matcher,
      });
      process.stdout.write(`${JSON.stringify(output)}\n`);
    } finally {
      await matcher.close();
      await prisma.$disconnect();
    }
    return 0;
  } catch (error) {
    process.stderr.write(`ops: ${describe(error)}\n`);
    return 1;
  }
}

function describe(error: unknown): string {
  if (error instanceof AppError || error instanceof ConfigError || error instanceof WrongDatabaseRole) return oneLine(error.message);
  // Prisma puts the call site and a code excerpt first and the cause ("Can't reach database
  // server …", a violated constraint) last; the operator needs only the cause.
  if (PRISMA_ERRORS.some((prismaError) => error instanceof prismaError)) {
    return `database error: ${(error as Error).message.trim().split('\n').at(-1)?.trim() ?? ''}`;
  }
  // Not the operator's mistake (a bug): still one line, marked as such.
  return `unexpected error: ${oneLine(error instanceof Error ? `${error.name}: ${error.message}` : String(error))}`;
}

const PRISMA_ERRORS = [
  Prisma.PrismaClientKnownRequestError,
  Prisma.PrismaClientUnknownRequestError,
  Prisma.PrismaClientInitializationError,
  Prisma.PrismaClientValidationError,
];

/** "invalid configuration:\n  A: …\n  B: …" -> "invalid configuration: A: …; B: …" */
function oneLine(text: string): string {
  const [first = '', ...rest] = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return rest.length === 0 ? first : `${first} ${rest.join('; ')}`;
}

// Exit at once: the database driver keeps timers alive for a while after disconnecting, and an
// operator (or a script calling ops in a loop) should not wait for them. Writes to stdout and
// stderr are synchronous for files and pipes, so nothing printed is lost.
void main(process.argv.slice(2)).then((exitCode) => process.exit(exitCode));
