import { WrongDatabaseRole } from './database-role';
import type { Logger } from './logger';

export interface Running {
  stop(): Promise<void>;
}

/**
 * Runs a service's `start()` and stops it gracefully on SIGTERM/SIGINT: in-flight requests and
 * messages finish, connections close, then the process exits. A second signal exits at once.
 */
export function runMain(name: string, logger: Logger, start: () => Promise<Running>): void {
  let running: Running | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, `${name} stopping`);
    try {
      await running?.stop();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, `${name} failed to stop cleanly`);
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  start().then(
    (r) => {
      running = r;
    },
    (error: unknown) => {
      // A refusal by design is one clear line; anything else is a fault, logged with its stack.
      if (error instanceof WrongDatabaseRole) logger.fatal(`${name} failed to start: ${error.message}`);
      else logger.fatal({ err: error }, `${name} failed to start`);
      process.exit(1);
    },
  );
}
