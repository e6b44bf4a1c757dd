import { keepLastOnFailure } from '@pmatch/platform';
import { Gauge, type Registry } from 'prom-client';

/** Per organisation and mode: dedicated accounts in all and those free now, read from the database at each scrape. */
export type CountDedicatedAccounts = () => Promise<{ organisationId: string; mode: string; total: number; free: number }[]>;

/**
 * `pmatch_dedicated_accounts` and `pmatch_dedicated_accounts_free` per organisation and mode: the
 * alert PmatchDedicatedAccountsRunningOut compares them (deploy/k8s/monitoring). Every replica
 * reports the same counts.
 */
export function registerDedicatedAccountGauges(registry: Registry, count: CountDedicatedAccounts): void {
  const registers = [registry];
  const total = new Gauge({
    name: 'pmatch_dedicated_accounts',
    help: 'Dedicated transfer accounts, per organisation and mode',
    labelNames: ['organisation_id', 'mode'],
    registers,
  });
  new Gauge({
    name: 'pmatch_dedicated_accounts_free',
    help: 'Dedicated transfer accounts free to give to a new order (given to no buyer, no order, or rested after their order closed)',
    labelNames: ['organisation_id', 'mode'],
    registers,
    async collect() {
      await keepLastOnFailure(async () => {
        const pools = await count();
        total.reset();
        this.reset();
        for (const pool of pools) {
          const labels = { organisation_id: pool.organisationId, mode: pool.mode };
          total.set(labels, pool.total);
          this.set(labels, pool.free);
        }
      });
    },
  });
}
