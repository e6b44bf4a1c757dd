import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import type { Registry } from 'prom-client';
import { finishHttpApp } from './http';
import type { Logger } from './logger';

export interface AdminAppOptions {
  logger: Logger;
  metrics: Registry;
  /** Each check throws when its dependency is not usable; /readyz answers 503 then. */
  readiness: Record<string, () => Promise<void>>;
}

/**
 * The admin port's app: `/healthz` (the process runs), `/readyz` (every dependency answers) and
 * Prometheus `/metrics`; anything else is the usual 404 body. It is served on a port of its own
 * that no Ingress routes (docs/decisions/0060-health-and-metrics-on-an-admin-port.md).
 */
export function createAdminApp(options: AdminAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((req, _res, next) => {
    req.requestId = `req_${randomUUID().replace(/-/g, '')}`;
    next();
  });
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const results = await Promise.all(
      Object.entries(options.readiness).map(async ([name, check]) => {
        try {
          await check();
          return [name, 'ok'] as const;
        } catch {
          return [name, 'unavailable'] as const;
        }
      }),
    );
    const ready = results.every(([, state]) => state === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'unavailable', checks: Object.fromEntries(results) });
  });
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', options.metrics.contentType);
    res.send(await options.metrics.metrics());
  });
  finishHttpApp(app, options.logger);
  return app;
}
