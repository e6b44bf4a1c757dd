import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { zenginReference as canonicalReference } from '../../../services/bank-ingest/src/domain/statements/references';
import { pushNotification, pushStatement, signBytes, zenginReference } from '../src/adapter';

const adapterId = 'adp_0123456789abcdefABCDEF01';
const secret = `whsec_${Buffer.from('a test adapter secret of 32 bytes').toString('base64')}`;

interface Received {
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A stand-in for bank-ingest: refuses the first `failures` requests with 503, then answers 200. */
async function ingest(failures: number): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(received.length <= failures ? 503 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ attempt: received.length }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

/** What bank-ingest checks: the HMAC over `id.timestamp.` and the raw bytes, with the adapter's key. */
function verifiesOverBytes(request: Received): boolean {
  const hmac = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'));
  hmac.update(`${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.`);
  hmac.update(request.body);
  return request.headers['webhook-signature'] === `v1,${hmac.digest('base64')}`;
}

let folder: string;
beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), 'bank-adapter-'));
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('bank adapter', () => {
  test('when bank-ingest answers 503 twice, then the statement is sent again with the same id until it answers, each attempt signed over the exact bytes', async () => {
    const { url, received, server } = await ingest(2);
    const path = join(folder, 'nyushukkin.txt');
    // Shift_JIS half-width kana (ｶﾞ = B6 DE) are not UTF-8: a signature over decoded text would differ.
    const bytes = Buffer.concat([Buffer.from('1030'), Buffer.from([0xb6, 0xde, 0x80]), Buffer.alloc(193, 0x20)]);
    writeFileSync(path, bytes);
    try {
      const answer = await pushStatement({ ingestUrl: url, adapterId, secret, backoffMs: () => 1 }, path);

      expect(answer).toMatchObject({ status: 200, attempts: 3, body: { attempt: 3 } });
      expect(received.map((r) => r.headers['webhook-id'])).toEqual([answer.id, answer.id, answer.id]);
      expect(received.every((r) => Buffer.compare(r.body, bytes) === 0 && verifiesOverBytes(r))).toBe(true);
      expect(received[0]!.headers['content-type']).toBe('application/octet-stream');
      expect(received.map((r) => r.headers['bank-adapter-id'])).toEqual([adapterId, adapterId, adapterId]);
    } finally {
      server.close();
    }
  });

  test('when a notification is pushed, then the official standardwebhooks verifier accepts it, and a 4xx is an answer not retried', async () => {
    const { url, received, server } = await ingest(0);
    try {
      const answer = await pushNotification(
        { ingestUrl: url, adapterId, secret },
        {
          account: { bank_code: '0001', branch_code: '001', account_type: 'ordinary', account_number: '1234567' },
          bank_reference: zenginReference('2026-11-20', '000123', 5000),
          direction: 'deposit',
          amount: 5000,
          counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ',
          occurred_at: '2026-11-20T10:00:00+09:00',
        },
      );

      expect(answer.status).toBe(200);
      const [request] = received;
      const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(request!.headers[h])]));
      expect(new Webhook(secret).verify(request!.body.toString('utf8'), headers)).toMatchObject({ bank_reference: 'zengin:20261120:123:5000' });
      expect(verifiesOverBytes(request!)).toBe(true);
      expect(request!.headers['bank-adapter-id']).toBe(adapterId);
    } finally {
      server.close();
    }
  });

  test('when text is UTF-8, then signing its bytes gives what standardwebhooks gives: one scheme', () => {
    const at = new Date('2026-11-27T01:02:03Z');
    const text = '<Document>ヤマダ タロウ</Document>';

    expect(signBytes(secret, 'msg_1', at, Buffer.from(text, 'utf8'))).toBe(new Webhook(secret).sign('msg_1', at, text));
  });

  test("when a reference is made for a Zengin deposit, then it is bank-ingest's canonical reference of that record", () => {
    const raw = new Uint8Array(200);

    expect(zenginReference('2026-11-20', '00000123', 5000)).toBe(
      canonicalReference({ booked: '2026-11-20', reference: '00000123', amount: 5000, raw, direction: 'deposit' }),
    );
  });

  test('when bank-ingest never answers, then pushing gives up after maxAttempts with the same id each time', async () => {
    const { url, received, server } = await ingest(99);
    try {
      await expect(
        pushNotification(
          { ingestUrl: url, adapterId, secret, backoffMs: () => 1, maxAttempts: 3 },
          {
            bank_account_id: 'ba_123456789012',
            bank_reference: 'r',
            direction: 'deposit',
            amount: 1,
            counterparty: 'x',
            occurred_at: '2026-11-20T10:00:00+09:00',
          },
        ),
      ).rejects.toThrow(/after 3 attempts/);
      expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(1);
      expect(received).toHaveLength(3);
    } finally {
      server.close();
    }
  });
});
