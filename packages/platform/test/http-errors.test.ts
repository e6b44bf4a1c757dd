import type { Server } from 'node:http';
import { connect } from 'node:net';
import { Registry } from 'prom-client';
import { createPrisma, type PrismaClient } from '@pmatch/db';
import { createTestDatabase, type TestDatabase } from '@pmatch/testkit';
import { createHttpApp, createLogger, finishHttpApp, listen } from '../src';

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
  /** The holding transaction, to its commit (its connection is back in the pool after that). */
  let held: Promise<void> = Promise.resolve();

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrisma(db.url, { poolSize: 1 });
    const logger = createLogger('http-errors-test', 'silent');
    const app = createHttpApp({ logger, metrics: new Registry() });
    app.post('/hold', async (_req, res) => {
      held = prisma.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT 1 AS one`;
        res.status(202).json({ holding: true });
        await new Promise<void>((resolve) => (release = resolve));
      });
      await held;
    });
    app.get('/work', async (_req, res) => {
      res.json(await prisma.$transaction(async (tx) => tx.$queryRaw`SELECT 1 AS one`, { maxWait: 100 }));
    });
    app.post('/echo', (req, res) => {
      res.json(req.body);
    });
    app.get('/bug', () => {
      throw new Error('secret detail of a bug');
    });
    finishHttpApp(app, logger);
    server = await listen(app, 0, '127.0.0.1');
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
      error: {
        type: 'api_error',
        code: 'service_unavailable',
        message: expect.stringContaining('retry later'),
        request_id: response.headers.get('request-id'),
      },
    });
    expect(JSON.stringify(body)).not.toMatch(/P2028|prisma/i);
    // Once the connection is free again, the same request succeeds. Free means the holder has
    // committed, not only been released: on a busy machine its COMMIT can outlast /work's 100 ms wait.
    await held;
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

  test('when a gzip-encoded body is not gzip, then 400 parameter_invalid with the error body, not 500', async () => {
    const response = await fetch(`${baseUrl}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: '{"a":1}',
    });
    const body = await response.json();

    expect(response.status).toBe(400);
    expect(body).toEqual({
      error: { type: 'invalid_request_error', code: 'parameter_invalid', message: expect.any(String), request_id: response.headers.get('request-id') },
    });
  });

  test('when a body carries the key __proto__ at any depth, then 400 naming where, and the handler never sees it', async () => {
    const response = await fetch(`${baseUrl}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"metadata":{"ok":"1","__proto__":"x"}}',
    });
    const body = await response.json();

    expect(response.status).toBe(400);
    expect(body.error).toMatchObject({ code: 'parameter_invalid', param: 'metadata.__proto__' });
  });

  test.each([
    ['a control character in a header', 'X-Key: a\u0001b\r\n', 400],
    ['headers over 16 KiB', `X-Key: ${'k'.repeat(20_000)}\r\n`, 431],
  ])('when a request has %s, then its status (400 or 431) with the error body, before any route', async (_what, header, status) => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(baseUrl).port), '127.0.0.1');
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
      socket.write(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n${header}\r\n{}`);
    });
    const [head, body] = raw.split('\r\n\r\n');
    const requestId = /^request-id: (\S+)$/im.exec(head!)?.[1];

    expect(head).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
    expect(JSON.parse(body!)).toEqual({
      error: { type: 'invalid_request_error', code: 'parameter_invalid', message: expect.any(String), request_id: requestId },
    });
  });
});
