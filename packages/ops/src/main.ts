#!/usr/bin/env node
import { OpsSession } from './session';

/**
 * `ops <group> <action> --flag value …`: one JSON object on stdout and exit 0, or one JSON error
 * on stderr and the exit code of its kind (failures.ts); `--help` prints help and exits 0.
 */
async function main(argv: readonly string[]): Promise<number> {
  const session = new OpsSession(process.env);
  try {
    const outcome = await session.execute(argv);
    if ('stdout' in outcome) process.stdout.write(outcome.stdout);
    else process.stderr.write(outcome.stderr);
    return outcome.exitCode;
  } finally {
    // What it printed stands; a connection that does not close cleanly changes nothing.
    await session.close().catch(() => undefined);
  }
}

// Exit at once: the database driver keeps timers alive for a while after disconnecting, and an
// operator (or a script calling ops in a loop) should not wait for them. Writes to stdout and
// stderr are synchronous for files and pipes, so nothing printed is lost.
void main(process.argv.slice(2)).then((exitCode) => process.exit(exitCode));
