import { Agent, get, type Server } from 'node:http';
import { Registry } from 'prom-client';
import { KEEP_ALIVE_TIMEOUT_MS, closeServer, createHttpApp, createLogger, finishHttpApp, listen } from '../src';

/** How our servers keep connections open between requests, and end them when closing. */

let server: Server;
let baseUrl: string;
let metrics: Registry;
let answer: (() => void) | undefined;
/** Resolves when the server is done with the last /later response (answered or abandoned). */
let laterClosed: Promise<void> = Promise.resolve();
const started: (() => void)[] = [];

beforeEach(async () => {
  metrics = new Registry();
  const app = createHttpApp({ logger: createLogger('test', 'silent'), metrics });
  app.get('/now', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/later', (_req, res) => {
    answer = () => res.json({ ok: true });
    laterClosed = new Promise((resolve) => res.once('close', () => resolve()));
    started.shift()?.();
  });
  finishHttpApp(app, createLogger('test', 'silent'));
  server = await listen(app, 0, '127.0.0.1');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  baseUrl = `http://127.0.0.1:${address.port}`;
});

afterEach(() => {
  server.closeAllConnections();
  server.close();
});

/** GETs `path` on a keep-alive connection of `agent`; resolves with the Keep-Alive header once the body is read. */
function getKeepingAlive(agent: Agent, path: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    get(`${baseUrl}${path}`, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.headers['keep-alive']));
    }).on('error', reject);
  });
}

test("when a client keeps its connection open, then the server keeps it idle longer than a load balancer's 60 s, and says so", async () => {
  const agent = new Agent({ keepAlive: true });
  try {
    // Clients such as undici size their pools' idle timeout from this hint.
    expect(await getKeepingAlive(agent, '/now')).toBe(`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`);
    expect(KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThan(60_000);
    // The headers' timeout may be far shorter: it runs only while a request arrives (http-hardening.test.ts).
    expect(server.keepAliveTimeout).toBe(KEEP_ALIVE_TIMEOUT_MS);
  } finally {
    agent.destroy();
  }
});

/** Resolves once a handler of /later has started: the request is then in the server's hands. */
function laterStarted(): Promise<void> {
  return new Promise<void>((resolve) => started.push(resolve));
}

test('when the server closes while a request runs, then that request is answered and its connection ended at once, not after the keep-alive timeout', async () => {
  const agent = new Agent({ keepAlive: true });
  try {
    const running = laterStarted();
    const answered = getKeepingAlive(agent, '/later');
    await running;
    const closed = closeServer(server);
    answer!();

    expect(await answered).toBe(`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`);
    // Resolves only once every connection is gone: with the connection left open this waits the
    // whole keep-alive timeout (65 s), past this test's limit.
    await closed;
  } finally {
    agent.destroy();
  }
}, 20_000);

describe('requests in flight', () => {
  const inFlight = async () => (await metrics.getSingleMetric('http_requests_in_flight')!.get()).values[0]!.value;

  test('when a request is being answered, then it counts in flight until its answer is sent, and one abandoned by its client stops counting', async () => {
    const agent = new Agent({ keepAlive: true });
    try {
      const running = laterStarted();
      const answered = getKeepingAlive(agent, '/later');
      await running;
      expect(await inFlight()).toBe(1);
      answer!();
      await answered;
      expect(await inFlight()).toBe(0);

      const abandonedRunning = laterStarted();
      const abandoned = get(`${baseUrl}/later`).on('error', () => undefined);
      await abandonedRunning;
      expect(await inFlight()).toBe(1);
      abandoned.destroy();
      await laterClosed;
      expect(await inFlight()).toBe(0);
    } finally {
      agent.destroy();
    }
  });
});
