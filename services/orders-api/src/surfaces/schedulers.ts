import type { ServiceRuntime } from '@pmatch/platform';
import type { OrdersApiConfig } from '../config';
import { deleteExpiredDisplays } from '../data/console-displays';
import { deleteExpiredRecords } from '../data/retention';
import { SESSION_IDLE_MS, SESSION_MAX_MS, deleteEndedSessions } from '../use-cases/console-session';
import type { OrdersApiDeps } from '../use-cases/deps';

/**
 * The periodic sweeps: retention, and console sessions no request can use any more (with secrets
 * kept to be shown once that were never read). Replicas running them at once share the deletes.
 */
export function startSchedulers(runtime: ServiceRuntime, deps: OrdersApiDeps, config: OrdersApiConfig): void {
  const { database, clock } = deps;
  runtime.every('retention sweep', config.RETENTION_SWEEP_INTERVAL_MS, () => deleteExpiredRecords(database.prisma, clock.now()));
  runtime.every('console session sweep', config.RETENTION_SWEEP_INTERVAL_MS, async () => {
    const now = clock.now().getTime();
    await deleteEndedSessions(database.prisma, new Date(now - SESSION_IDLE_MS), new Date(now - SESSION_MAX_MS));
    await deleteExpiredDisplays(database.prisma, clock.now());
    return 0;
  });
}
