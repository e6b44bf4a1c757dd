import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Registry } from 'prom-client';
import { BaseConfig, createHttpApp, createLogger, finishHttpApp, httpServerLimits, jsonBodies, listen, loadConfig } from '../src';

/**
 * What our HTTP servers do with clients that are slow, malformed or too many, over raw sockets.
 * Counters in front of every route and in a JSON route show that no such request reaches a handler.
 * The limits come from the HTTP_* settings, small here so that nothing waits long.
 */

let server: Server;
let port: number;
const reached = { front: 0, route: 0 };

beforeAll(async () => {
  const config = loadConfig(BaseConfig, {
    HTTP_HEADERS_TIMEOUT_MS: '300',
    HTTP_REQUEST_TIMEOUT_MS: '600',
    HTTP_MAX_CONNECTIONS: '50',
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: '3',
  });
  const logger = createLogger('http-hardening-test', 'silent');
  const app = createHttpApp({ logger, metrics: new Registry(), bodies: 'where mounted' });
  app.use((_req, _res, next) => {
    reached.front += 1;
    next();
  });
  app.all('/count', ...jsonBodies(), (_req, res) => {
    reached.route += 1;
    res.json({ ok: true });
  });
  finishHttpApp(app, logger);
  server = await listen(app, 0, '127.0.0.1', httpServerLimits(config));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Opens a connection from `from`; resolves once connected. */
function open(from = '127.0.0.1'): Promise<{ socket: Socket; received: () => string; closed: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress: from });
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', () => undefined);
    const closed = new Promise<string>((done) => socket.once('close', () => done(data)));
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

/** Sends `bytes` on a new connection and resolves with everything answered until the server closes it. */
async function exchange(bytes: string): Promise<string> {
  const { socket, closed } = await open();
  socket.write(bytes);
  return closed;
}

const statusLine = (answer: string) => answer.split('\r\n')[0];

describe('malformed requests', () => {
  const cases: [string, string][] = [
    ['a NUL byte in a header value', 'GET /count HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n'],
    ['a space in a header name', 'GET /count HTTP/1.1\r\nHost: x\r\nBad Name: x\r\n\r\n'],
    ['a space before the colon', 'GET /count HTTP/1.1\r\nHost: x\r\nContent-Length : 0\r\n\r\n'],
    ['a folded header line', 'GET /count HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n'],
    ['bare line feeds', 'GET /count HTTP/1.1\nHost: x\n\n'],
    ['both Content-Length and Transfer-Encoding', 'POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['two different Content-Lengths', 'POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x'],
    ['the same Content-Length twice', 'POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}'],
    ['a Content-Length that is not a number', 'POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n{}'],
    ['a negative Content-Length', 'POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{}'],
    ['a Transfer-Encoding not ending in chunked', 'POST /count HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n'],
    ['an unknown HTTP version', 'GET /count HTTP/9.9\r\nHost: x\r\n\r\n'],
  ];

  test.each(cases)('when a request has %s, then it is answered 400 with the error body and closed, and no handler runs', async (_what, bytes) => {
    const before = { ...reached };

    const answer = await exchange(bytes);

    expect(statusLine(answer)).toBe('HTTP/1.1 400 Bad Request');
    expect(answer).toContain('"code":"parameter_invalid"');
    expect(reached).toEqual(before);
  });

  test('when a request has no Host header, then Node answers 400 itself and closes, and no handler runs', async () => {
    const before = { ...reached };
    expect(statusLine(await exchange('GET /count HTTP/1.1\r\n\r\n'))).toBe('HTTP/1.1 400 Bad Request');
    expect(reached).toEqual(before);
  });

  // The headers were whole, so the request has begun (middleware in front of routes sees it) when
  // the bad chunk arrives: the body is refused, and the route that needs it never runs.
  test('when a chunk size is not hexadecimal, then the answer is 400 and closed, and the route never runs', async () => {
    const before = reached.route;
    const answer = await exchange('POST /count HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n');
    expect(statusLine(answer)).toBe('HTTP/1.1 400 Bad Request');
    expect(reached.route).toBe(before);
  });

  test('when a well-formed request is sent the same way, then it reaches the route (the counters do count)', async () => {
    const before = reached.route;
    const answer = await exchange('POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}');
    expect(statusLine(answer)).toBe('HTTP/1.1 200 OK');
    expect(reached.route).toBe(before + 1);
  });
});

describe('slow clients', () => {
  /** Writes one header line every 100 ms (a slowloris) until the server closes the connection; resolves with its answer. */
  async function trickle(start: string, line: string): Promise<string> {
    const { socket, closed } = await open();
    socket.write(start);
    const timer = setInterval(() => socket.writable && socket.write(line), 100);
    try {
      return await closed;
    } finally {
      clearInterval(timer);
    }
  }

  test('when a client sends its headers slowly, then it is answered 408 and cut off at the headers timeout, and no handler runs', async () => {
    const before = { ...reached };
    const answer = await trickle('GET /count HTTP/1.1\r\nHost: x\r\n', 'X-Slow: y\r\n');
    expect(statusLine(answer)).toBe('HTTP/1.1 408 Request Timeout');
    expect(reached).toEqual(before);
  });

  test('when a client sends its body slowly, then it is cut off at the request timeout, and the route never runs', async () => {
    const before = reached.route;
    const answer = await trickle('POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n', ' ');
    expect(answer).not.toContain('200 OK');
    expect(reached.route).toBe(before);
  });

  test('when a keep-alive connection idles longer than the headers timeout between requests, then its next request is still served', async () => {
    const { socket, received } = await open();
    try {
      socket.write('GET /count HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(() => received().includes('{"ok":true}'));
      const first = received();
      // Idle for three headers timeouts: the timer runs only while a request is arriving.
      await new Promise((resolve) => setTimeout(resolve, 900));
      socket.write('GET /count HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(() => received().length > first.length && received().endsWith('{"ok":true}'));
      expect(statusLine(received().slice(first.length))).toBe('HTTP/1.1 200 OK');
    } finally {
      socket.destroy();
    }
  });
});

describe('connections per address', () => {
  test('when an address holds its most connections, then its next is closed unanswered, and another address is served', async () => {
    const held = await Promise.all([open('127.0.0.2'), open('127.0.0.2'), open('127.0.0.2')]);
    try {
      // Each is served, so the server has counted all three.
      for (const connection of held) connection.socket.write('GET /count HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(() => held.every((c) => c.received().includes('200 OK')));

      const extra = await open('127.0.0.2');
      extra.socket.write('GET /count HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await extra.closed).toBe('');

      expect(statusLine(await exchangeFrom('127.0.0.3'))).toBe('HTTP/1.1 200 OK');
      // Once one is given back, the address may connect again.
      held[0]!.socket.destroy();
      await held[0]!.closed;
      expect(statusLine(await exchangeFrom('127.0.0.2'))).toBe('HTTP/1.1 200 OK');
    } finally {
      for (const connection of held) connection.socket.destroy();
    }
  });

  async function exchangeFrom(from: string): Promise<string> {
    const { socket, closed } = await open(from);
    socket.write('GET /count HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    return closed;
  }
});

/** Polls `condition` each 10 ms until it holds (at most 5 s). */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition never held');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
