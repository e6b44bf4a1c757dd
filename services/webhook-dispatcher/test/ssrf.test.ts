import { AddressPolicy, DNS_LOOKUP_TIMEOUT_MS, vetWebhookUrl, type ResolveHost } from '@pmatch/platform';
import { buildConnector } from 'undici';
import { DispatcherHarness } from './support/harness';
import { Canary } from './support/receiver';

/**
 * The SSRF list (docs/decisions/0018-webhook-connections-vetted-and-pinned.md). Host names never reach real DNS here: a fixed table stands in for the
 * resolver. The connection layer under the address check is replaced by a guard that dials only
 * loopback (where the canaries listen), so even a broken check could never send a packet to any
 * other address from this test.
 */

const FORBIDDEN_LITERALS = [
  ['loopback', '127.0.0.1'],
  ['loopback, another address of 127/8', '127.1.2.3'],
  ['unspecified (reaches this machine)', '0.0.0.0'],
  ['RFC 1918 10/8', '10.0.0.1'],
  ['RFC 1918 172.16/12', '172.16.5.4'],
  ['RFC 1918 192.168/16', '192.168.1.1'],
  ['link-local', '169.254.1.1'],
  ['cloud metadata', '169.254.169.254'],
  ['CGNAT', '100.64.0.1'],
  ['IPv6 loopback', '[::1]'],
  ['IPv6 unique-local', '[fd00::1]'],
  ['IPv6 link-local', '[fe80::1]'],
  ['IPv4-mapped IPv6 of loopback', '[::ffff:127.0.0.1]'],
  ['IPv4-mapped IPv6 of metadata', '[::ffff:169.254.169.254]'],
  ['NAT64 of loopback', '[64:ff9b::7f00:1]'],
  ['6to4 of loopback', '[2002:7f00:1::]'],
  ['IPv4-compatible IPv6', '[::127.0.0.1]'],
  ['decimal IPv4 of loopback', '2130706433'],
] as const;

/** Stand-in DNS: what each test name resolves to. */
const DNS: Record<string, string[]> = {
  'private.example': ['10.1.2.3'],
  'loopback.example': ['127.0.0.1'],
  'metadata.example': ['169.254.169.254'],
  'v6-loopback.example': ['::1'],
  'mixed.example': ['93.184.216.34', '10.0.0.7'],
  'public.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
};
const resolveFromTable: ResolveHost = async (host) => {
  const answers = DNS[host];
  if (answers === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return answers;
};

describe('address policy with an empty allow-list', () => {
  const policy = new AddressPolicy([]);

  test.each(FORBIDDEN_LITERALS)('when the URL host is %s (%s), then registration refuses it with url_not_allowed', async (_name, host) => {
    await expect(vetWebhookUrl(`https://${host}/hooks`, policy, resolveFromTable)).rejects.toMatchObject({ code: 'url_not_allowed', status: 400 });
  });

  test.each(['private.example', 'loopback.example', 'metadata.example', 'v6-loopback.example', 'mixed.example'])(
    'when %s resolves to a non-public address, then it is refused',
    async (host) => {
      await expect(vetWebhookUrl(`https://${host}/hooks`, policy, resolveFromTable)).rejects.toMatchObject({ code: 'url_not_allowed' });
    },
  );

  test.each([
    'http://public.example/hooks',
    'https://localhost/hooks',
    'https://a.localhost/hooks',
    'https://user:pw@public.example/hooks',
    'https://nowhere.example/',
  ])('when the URL is %s, then it is refused', async (url) => {
    await expect(vetWebhookUrl(url, policy, resolveFromTable)).rejects.toMatchObject({ code: 'url_not_allowed' });
  });

  test('when a name resolves to a private address, then the refusal does not say which, nor differ from a name that does not resolve', async () => {
    const refusal = async (url: string) => {
      try {
        await vetWebhookUrl(url, policy, resolveFromTable);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error(`${url} was accepted`);
    };

    const messages = {
      private: await refusal('https://private.example/hooks'),
      metadata: await refusal('https://metadata.example/hooks'),
      mixed: await refusal('https://mixed.example/hooks'),
      missing: await refusal('https://nowhere.example/hooks'),
    };

    for (const message of Object.values(messages)) expect(message).not.toMatch(/10\.1\.2\.3|169\.254|10\.0\.0\.7|93\.184|\d+\.\d+\.\d+\.\d+/);
    expect(messages.private).toBe('private.example does not resolve to a public address; webhook URLs must reach the public internet.');
    expect(messages.missing).toBe(messages.private.replace('private.example', 'nowhere.example'));
  });

  test('when DNS does not answer, then registration gives up after the lookup deadline (5 s by default) with a clear 400', async () => {
    const silent: ResolveHost = () => new Promise<string[]>(() => undefined);

    const refused = vetWebhookUrl('https://slow-dns.example/hooks', policy, silent, { lookupTimeoutMs: 50 });

    await expect(refused).rejects.toMatchObject({
      code: 'url_not_allowed',
      status: 400,
      param: 'url',
      message: expect.stringMatching(/^Looking up slow-dns\.example took longer than 0\.05 s; check the host name/),
    });
    expect(DNS_LOOKUP_TIMEOUT_MS).toBe(5000);
  });

  test('when a name resolves only to public addresses, or the URL is a public IP literal, then it is accepted', async () => {
    await expect(vetWebhookUrl('https://public.example/hooks', policy, resolveFromTable)).resolves.toBeInstanceOf(URL);
    await expect(vetWebhookUrl('https://93.184.216.34/hooks', policy, resolveFromTable)).resolves.toBeInstanceOf(URL);
  });

  test('when the allow-list holds 127.0.0.0/8, then loopback (also IPv4-mapped) passes and nothing else does', () => {
    const testing = new AddressPolicy(['127.0.0.0/8']);

    expect(['127.0.0.1', '::ffff:127.0.0.1'].map((a) => testing.allows(a))).toEqual([true, true]);
    expect(['::1', '10.0.0.1', '169.254.169.254'].map((a) => testing.allows(a))).toEqual([false, false, false]);
  });
});

describe('delivery to forbidden addresses (allow-list empty)', () => {
  let harness: DispatcherHarness;
  let canary4: Canary;
  let canary6: Canary;
  const dialled: string[] = [];

  const LOOPBACK = /^(127\.\d+\.\d+\.\d+|0\.0\.0\.0|::1|::ffff:127\.\d+\.\d+\.\d+|::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4})$/i;
  /** Dials loopback for real (a canary counts it) and refuses every other address without a packet. */
  const realConnect = buildConnector({ timeout: 2000 });
  const loopbackOnly: buildConnector.connector = (target, callback) => {
    dialled.push(target.hostname);
    if (LOOPBACK.test(target.hostname)) realConnect(target, callback);
    else callback(new Error(`test guard: refused to dial ${target.hostname}`), null);
  };

  beforeAll(async () => {
    canary4 = await Canary.start('127.0.0.1');
    canary6 = await Canary.start('::1');
    harness = await DispatcherHarness.start({
      env: { WEBHOOK_ALLOWED_CIDRS: '', DELIVERY_TIMEOUT_MS: '2000' },
      seams: { resolveHost: resolveFromTable, connectVetted: loopbackOnly },
    });
  });

  afterAll(async () => {
    await harness?.stop();
    await canary4?.close();
    await canary6?.close();
  });

  test('when endpoints point at every address of the SSRF list, then each attempt is refused before connecting and no canary is reached', async () => {
    const orgId = await harness.createOrganisation();
    const port4 = canary4.port;
    const port6 = canary6.port;
    const urls = [
      ...FORBIDDEN_LITERALS.map(([, host]) => `https://${host}:${host.includes('::1]') ? port6 : port4}/hooks`),
      `https://localhost:${port4}/hooks`,
      `https://loopback.example:${port4}/hooks`,
      `https://v6-loopback.example:${port6}/hooks`,
      `https://private.example:${port4}/hooks`,
      `https://metadata.example:${port4}/hooks`,
      `https://mixed.example:${port4}/hooks`,
    ];
    const endpoints = await Promise.all(urls.map((url) => harness.createEndpoint(orgId, url)));

    const eventId = await harness.recordEvent(orgId);

    for (const [i, endpoint] of endpoints.entries()) {
      const [attempt] = await harness.waitForAttempts(endpoint.id, eventId, 1);
      expect({ url: urls[i], statusCode: attempt!.statusCode, error: attempt!.error }).toEqual({
        url: urls[i],
        statusCode: null,
        error: expect.stringMatching(/^url_not_allowed: /),
      });
      // A name's addresses are our DNS's answer, never shown to the merchant (a literal is their own input).
      if (urls[i]!.includes('.example:')) expect(attempt!.error).not.toMatch(/\d+\.\d+\.\d+\.\d+|::/);
    }
    expect(dialled).toEqual([]);
    expect(canary4.connections).toBe(0);
    expect(canary6.connections).toBe(0);
  });
});

describe('canary control', () => {
  test('when loopback is allow-listed, then a delivery to the canary does reach it (so a silent canary means something)', async () => {
    const canary = await Canary.start('127.0.0.1');
    const harness = await DispatcherHarness.start({ env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', DELIVERY_TIMEOUT_MS: '1000' } });
    try {
      const orgId = await harness.createOrganisation();
      const endpoint = await harness.createEndpoint(orgId, `https://127.0.0.1:${canary.port}/hooks`);

      const eventId = await harness.recordEvent(orgId);

      const [attempt] = await harness.waitForAttempts(endpoint.id, eventId, 1);
      expect(attempt!.error).not.toMatch(/url_not_allowed/);
      expect(canary.connections).toBe(1);
    } finally {
      await harness.stop();
      await canary.close();
    }
  });
});
