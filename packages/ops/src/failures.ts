import { AppError } from '@pmatch/contracts';
import { Prisma } from '@pmatch/db';
import { ConfigError, WrongDatabaseRole } from '@pmatch/platform';

/** The CLI's exit codes; `ops --help` and the README list them. */
export const EXIT_CODES = {
  ok: 0,
  /** Anything else: the database or broker unreachable, the matcher not answering, a bad setting, a bug. */
  failed: 1,
  /** The input is wrong: the command line, or a value the data refuses (a test account where a live one is needed). */
  usage: 2,
  /** An id given names nothing. */
  notFound: 3,
  /** The change conflicts with what exists (an account or user already there, an order no longer open). */
  conflict: 4,
} as const;

/** A failure the CLI itself names: a bad command line, or something already existing. */
export class OpsError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: number,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'OpsError';
  }
}

export function usageError(message: string): OpsError {
  return new OpsError('usage_error', message, EXIT_CODES.usage);
}

export function alreadyExists(message: string, param?: string): OpsError {
  return new OpsError('already_exists', message, EXIT_CODES.conflict, param);
}

/** What the CLI prints on stderr, one line of JSON. */
export interface FailureBody {
  error: { code: string; message: string; param?: string };
}

/** Any error thrown by a command as its exit code and body: one line, never a stack trace. */
export function failureOf(error: unknown): { exitCode: number; body: FailureBody } {
  const failure = (exitCode: number, code: string, message: string, param?: string) => ({
    exitCode,
    body: { error: { code, message: oneLine(message), ...(param === undefined ? {} : { param }) } },
  });
  if (error instanceof OpsError) return failure(error.exitCode, error.code, error.message, error.param);
  if (error instanceof AppError) return failure(exitCodeOfStatus(error.status), error.code, error.message, error.param);
  if (error instanceof ConfigError) return failure(EXIT_CODES.failed, 'configuration_invalid', error.message);
  if (error instanceof WrongDatabaseRole) return failure(EXIT_CODES.failed, 'database_role_refused', error.message);
  if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
    return failure(EXIT_CODES.conflict, 'already_exists', `database error: ${lastLine(error.message)}`);
  }
  if (error instanceof Prisma.PrismaClientInitializationError) {
    return failure(EXIT_CODES.failed, 'database_unavailable', `database error: ${lastLine(error.message)}`);
  }
  if (PRISMA_ERRORS.some((prismaError) => error instanceof prismaError)) {
    return failure(EXIT_CODES.failed, 'database_error', `database error: ${lastLine((error as Error).message)}`);
  }
  // Not the operator's mistake (a bug): still one line, marked as such.
  return failure(EXIT_CODES.failed, 'internal_error', `unexpected error: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
}

function exitCodeOfStatus(status: number): number {
  if (status === 404) return EXIT_CODES.notFound;
  if (status === 409) return EXIT_CODES.conflict;
  if (status >= 400 && status < 500) return EXIT_CODES.usage;
  return EXIT_CODES.failed;
}

const PRISMA_ERRORS = [
  Prisma.PrismaClientKnownRequestError,
  Prisma.PrismaClientUnknownRequestError,
  Prisma.PrismaClientInitializationError,
  Prisma.PrismaClientValidationError,
];

/**
 * Prisma puts the call site and a code excerpt first and the cause ("Can't reach database
 * server …", a violated constraint) last; the operator needs only the cause.
 */
function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)?.trim() ?? '';
}

/** "invalid configuration:\n  A: …\n  B: …" -> "invalid configuration: A: …; B: …" */
function oneLine(text: string): string {
  const [first = '', ...rest] = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return rest.length === 0 ? first : `${first} ${rest.join('; ')}`;
}
