import type { Server } from 'node:http';
import { Registry } from 'prom-client';
import { createPrisma, type PrismaClient } from '@pmatch/db';
import { createTestDatabase, type TestDatabase } from '@pmatch/testkit';
import { createHttpApp, createLogger, finishHttpApp } from '../src';

/**
 * The one error handler tells a client whether to retry: a database that is briefly unavailable
 * (here: every pooled connection busy, Prisma's P2028) is 503 service_unavailable with Retry-After,
 * while our own failure is 500 internal_error; neither carries the cause.
 */
describe('HTTP error answers', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  let server: Server;
  let baseUrl: string;
  let release: () => void = () => undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrisma(db.url, { poolSize: 1 });
    const logger = createLogger('http-errors-test', 'silent');
    const app = createHttpApp({ logger, metrics: new Registry(), readiness: {} });
    app.post('/hold', async (_req, res) => {
      await prisma.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT 1 AS one`;
        res.status(202).json({ holding: true });
        await new Promise<void>((resolve) => (release = resolve));
      });
    });
    app.get('/work', async (_req, res) => {
      res.json(await prisma.$transaction(async (tx) => tx.$queryRaw`SELECT 1 AS one`, { maxWait: 100 }));
    });
    app.get('/bug', () => {
      throw new Error('secret detail of a bug');
    });
    finishHttpApp(app, logger);
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    baseUrl = `http://127.0.0.1:${address.port}`;
  });

  afterAll(async () => {
    release();
    await new Promise((resolve) => server?.close(resolve));
    await prisma?.$disconnect();
    await db?.drop();
  });

  test('when no database connection is free in time, then 503 service_unavailable with Retry-After', async () => {
    const holding = await fetch(`${baseUrl}/hold`, { method: 'POST' });
    expect(holding.status).toBe(202);
    const response = await fetch(`${baseUrl}/work`);
    release();
    const body = await response.json();
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(body).toEqual({
      error: { type: 'api_error', code: 'service_unavailable', message: expect.stringContaining('retry later'), request_id: response.headers.get('request-id') },
    });
    expect(JSON.stringify(body)).not.toMatch(/P2028|prisma/i);
    // Once the connection is free again, the same request succeeds.
    await expect(fetch(`${baseUrl}/work`).then((r) => r.status)).resolves.toBe(200);
  });

  test('when a handler fails on our side, then 500 internal_error without the cause', async () => {
    const response = await fetch(`${baseUrl}/bug`);
    const body = await response.json();
    expect(response.status).toBe(500);
    expect(response.headers.get('retry-after')).toBeNull();
    expect(body.error.code).toBe('internal_error');
    expect(JSON.stringify(body)).not.toContain('secret detail');
  });
});
