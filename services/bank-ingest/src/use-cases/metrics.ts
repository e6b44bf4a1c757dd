import { Counter, type Registry } from 'prom-client';

/** Where a deposit came from: a bank adapter's notification, a statement file, or a test deposit. */
export type DepositSource = 'notification' | 'statement' | 'test';

export interface IngestMetrics {
  /** Counts deposits stored for the first time (duplicates are not counted). */
  depositsIngested(source: DepositSource, count?: number): void;
}

export function createIngestMetrics(registry: Registry): IngestMetrics {
  const ingested = new Counter({
    name: 'pmatch_deposits_ingested_total',
    help: 'Deposits stored for the first time, by source (notification, statement, test)',
    labelNames: ['source'],
    registers: [registry],
  });
  for (const source of ['notification', 'statement', 'test'] as const) ingested.inc({ source }, 0);
  return { depositsIngested: (source, count = 1) => ingested.inc({ source }, count) };
}
