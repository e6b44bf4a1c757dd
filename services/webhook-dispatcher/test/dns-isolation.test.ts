import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import * as dnsPacket from 'dns-packet';
import { waitFor } from '@pmatch/testkit';
import { DispatcherHarness } from './support/harness';
import { HttpsReceiver } from './support/receiver';
import { TestCa } from './support/tls';

/**
 * One merchant's DNS cannot stall another's webhooks. The real dispatcher resolves webhook hosts
 * through a name server of this test's own (UDP on loopback): it answers for receiver.test (the
 * good merchant's receiver, on loopback) and never answers for the stalling merchant's names.
 * Timings are compared with each other (an ordering), never with a fixed bound.
 */

const GOOD_HOST = 'receiver.test';
const LOOKUPS_PER_ORGANISATION = 2;
const DNS_TIMEOUT_MS = 8000;

/** A name server that answers A (127.0.0.1) and AAAA (none) for GOOD_HOST and stays silent for every other name. */
class TestNameServer {
  /** Every question received, in order: the name asked and when. */
  readonly questions: { name: string; at: number }[] = [];

  private constructor(private readonly socket: Socket) {}

  static async start(): Promise<TestNameServer> {
    const socket = createSocket('udp4');
    const server = new TestNameServer(socket);
    socket.on('message', (message, peer) => server.answer(message, peer.port, peer.address));
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return server;
  }

  get address(): string {
    return `127.0.0.1:${(this.socket.address() as AddressInfo).port}`;
  }

  namesAsked(predicate: (name: string) => boolean, before = Infinity): Set<string> {
    return new Set(this.questions.filter((q) => q.at < before && predicate(q.name)).map((q) => q.name));
  }

  private answer(message: Buffer, port: number, address: string): void {
    const query = dnsPacket.decode(message);
    const question = query.questions?.[0];
    if (question === undefined) return;
    this.questions.push({ name: question.name, at: performance.now() });
    if (question.name !== GOOD_HOST) return;
    const answers: dnsPacket.Answer[] = question.type === 'A' ? [{ type: 'A', name: GOOD_HOST, ttl: 60, data: '127.0.0.1' }] : [];
    const response = dnsPacket.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
      questions: [question],
      answers,
    });
    this.socket.send(response, port, address);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

let ca: TestCa;
let receiver: HttpsReceiver;
let nameServer: TestNameServer;
let harness: DispatcherHarness;

beforeAll(async () => {
  ca = TestCa.create();
  receiver = await HttpsReceiver.start(ca.issueServerCertificate());
  nameServer = await TestNameServer.start();
  harness = await DispatcherHarness.start({
    env: {
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
      WEBHOOK_CA_FILE: ca.certFile,
      WEBHOOK_DNS_SERVERS: nameServer.address,
      WEBHOOK_DNS_TIMEOUT_MS: String(DNS_TIMEOUT_MS),
      WEBHOOK_DNS_LOOKUPS_PER_ORGANISATION: String(LOOKUPS_PER_ORGANISATION),
      DELIVERY_TIMEOUT_MS: '10000',
      DELIVERY_LEASE_MS: '30000',
    },
  });
});

afterAll(async () => {
  await harness?.stop();
  await nameServer?.close();
  await receiver?.close();
  ca?.remove();
});

/** Records an event for a new merchant with an endpoint on the good host; resolves with how long until it arrived. */
async function timedGoodDelivery(path: string): Promise<{ ms: number; arrivedAt: number }> {
  const orgId = await harness.createOrganisation();
  await harness.createEndpoint(orgId, `https://${GOOD_HOST}:${receiver.port}${path}`);
  const started = performance.now();
  await harness.recordEvent(orgId);
  await waitFor(() => (receiver.requestsTo(path).length > 0 ? true : undefined), { timeoutMs: 60_000, what: `a delivery at ${path}` });
  const arrivedAt = performance.now();
  return { ms: arrivedAt - started, arrivedAt };
}

test("when one merchant's webhook hosts never resolve, then another merchant's delivery arrives while those lookups still hang, and the stalled merchant has at most its share of lookups in flight", async () => {
  const alone = await timedGoodDelivery('/alone');
  const stalledOrg = await harness.createOrganisation();
  const stalled = await Promise.all([1, 2, 3, 4].map((n) => harness.createEndpoint(stalledOrg, `https://never-${n}.example/hooks`)));
  const stalledEvents = await harness.recordEvents(stalledOrg, 3);
  const stallStarted = performance.now();
  await waitFor(() => (nameServer.namesAsked((name) => name.startsWith('never-')).size > 0 ? true : undefined), { what: 'the stalled lookups to begin' });

  const during = await timedGoodDelivery('/during-stall');

  // The stalled merchant's lookups were still hanging: none of its attempts had ended yet.
  const stalledAttemptsThen = (await Promise.all(stalled.map((e) => harness.attempts(e.id, stalledEvents[0]!)))).flat();
  const firstStalledEnd = await waitFor(
    async () => {
      const attempts = (await Promise.all(stalled.flatMap((e) => stalledEvents.map((ev) => harness.attempts(e.id, ev))))).flat();
      return attempts.length > 0 ? { at: performance.now(), attempts } : undefined;
    },
    { timeoutMs: 60_000, what: 'the stalled lookups to be given up' },
  );
  expect(stalledAttemptsThen).toEqual([]);
  expect(during.arrivedAt).toBeLessThan(firstStalledEnd.at);
  expect(during.arrivedAt - stallStarted).toBeLessThan(firstStalledEnd.at - stallStarted);
  // Compared with its usual time, not with a fixed bound: the stall added less than half of what
  // the stalled lookups hung (it would add all of it if lookups shared threads or slots).
  expect(during.ms).toBeLessThan(alone.ms + (firstStalledEnd.at - stallStarted) / 2);
  // Four endpoints, three events, four slots each: at most LOOKUPS_PER_ORGANISATION names were being
  // looked up while the good delivery went through.
  expect(nameServer.namesAsked((name) => name.startsWith('never-'), during.arrivedAt).size).toBeLessThanOrEqual(LOOKUPS_PER_ORGANISATION);
  expect(firstStalledEnd.attempts[0]).toMatchObject({
    statusCode: null,
    error: expect.stringMatching(
      /^url_not_allowed: (Looking up never-\d\.example took longer than 8 s|never-\d\.example does not resolve to a public address)/,
    ),
  });
});
