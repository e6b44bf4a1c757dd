import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { AddressPolicy } from '@pmatch/platform';
import { createPinnedAgent } from '../src/outbound/pinned-agent';
import { WebhookClient } from '../src/outbound/webhook-client';
import { HttpsReceiver } from './support/receiver';
import { TestCa } from './support/tls';

let ca: TestCa;
let receivers: HttpsReceiver[];
let selfSigned: HttpsReceiver;

beforeAll(async () => {
  ca = TestCa.create();
  receivers = [await HttpsReceiver.start(ca.issueServerCertificate()), await HttpsReceiver.start(ca.issueServerCertificate())];
  selfSigned = await HttpsReceiver.start(ca.selfSignedCertificate());
});

afterAll(async () => {
  for (const receiver of receivers ?? []) await receiver.close();
  await selfSigned?.close();
  ca?.remove();
});

test('when the agent trusts one more CA, then it builds its TLS context once, and every new connection trusts that CA and still refuses the untrusted', async () => {
  const contexts = jest.spyOn(tls, 'createSecureContext');
  const agent = createPinnedAgent({
    policy: new AddressPolicy(['127.0.0.0/8']),
    resolve: async (host) => {
      throw new Error(`no DNS in this test (${host})`);
    },
    extraCa: readFileSync(ca.certFile, 'utf8'),
    connectTimeoutMs: 2000,
  });
  const client = new WebhookClient(() => agent, 2000);
  try {
    const outcomes = [];
    for (const target of [...receivers, selfSigned]) outcomes.push(await client.post('org_test', target.url('/hooks'), {}, '{}'));

    expect(outcomes.map((o) => [o.statusCode, o.error])).toEqual([
      [200, null],
      [200, null],
      [null, expect.stringMatching(/self[- ]signed/i)],
    ]);
    expect(receivers.map((r) => r.connections)).toEqual([1, 1]);
    expect(contexts).toHaveBeenCalledTimes(1);
  } finally {
    contexts.mockRestore();
    await agent.close();
  }
});
