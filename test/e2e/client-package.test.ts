import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiError, PaymentsClient, bankForm } from '@pmatch/client';
import { REPO_ROOT, TestSystem, freePort } from '@pmatch/testkit';
import { ListenProcess } from '../../packages/ops/test/listen-process';

/**
 * An integrator's first day, as a test: from a directory outside the repository, the packed client
 * installs with the one command its README gives, a strict TypeScript script compiles against it,
 * and run against the real services it creates an order, pays it with a test deposit and receives
 * the order's `order.paid` webhook on localhost through `ops webhooks listen`.
 */

const run = promisify(execFile);
const CLIENT = join(REPO_ROOT, 'packages', 'client');

let system: TestSystem;
let project: string;
let listener: ListenProcess | undefined;

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'first-day-'));
  system = await TestSystem.start();
});

afterAll(async () => {
  await listener?.stop();
  await system?.stop();
  rmSync(project, { recursive: true, force: true });
});

/** `npm …` in `cwd`, its output kept off the test's. */
const npm = (cwd: string, ...args: string[]) => run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, maxBuffer: 16 * 1024 * 1024 });

/** The shop's script: only what the client's README shows, compiled with every strict check. */
const SCRIPT = `import { createServer } from 'node:http';
import { PaymentsClient, WebhookVerifier, bankForm, type EventOf } from '@pmatch/client';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(\`set \${name}\`);
  return value;
};
const payments = new PaymentsClient({ apiKey: env('PAYMENTS_API_KEY'), baseUrl: env('PAYMENTS_API_URL') });
const verifier = new WebhookVerifier(env('WEBHOOK_SECRET'));
let orderId: string | undefined;

const paid = new Promise<EventOf<'order.paid'>>((resolve) => {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        const event = verifier.verify(Buffer.concat(chunks), req.headers);
        res.writeHead(204).end();
        if (event.type === 'order.paid' && event.data.object.id === orderId) {
          server.close();
          resolve(event);
        }
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  server.listen(Number(env('PORT')), '127.0.0.1');
});
setTimeout(() => {
  console.error('no order.paid webhook within 60 s');
  process.exit(1);
}, 60_000).unref();

const payerName = bankForm('ヤマダ ジロウ');
if (payerName === undefined) throw new Error('no bank prints this name');
const order = await payments.orders.create({ amount: 4321, payer_name: payerName, external_id: \`first-day-\${Date.now()}\`, item_name: 'お米 5kg' });
orderId = order.id;
const deposit = await payments.testDeposits.create({ amount: order.amount, counterparty: order.payer_name_bank_form ?? payerName });
const event = await paid;
console.log(JSON.stringify({
  order_id: order.id,
  created_status: order.lastResponse.statusCode,
  request_id: order.lastResponse.requestId ?? null,
  payer_name: order.payer_name,
  deposit_status: deposit.status,
  event_id: event.id,
  event_type: event.type,
  order_status: event.data.object.status,
  reason: event.data.object.payment?.reason ?? null,
}));
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    noImplicitOverride: true,
    skipLibCheck: false,
    outDir: 'dist',
  },
  include: ['shop.ts'],
};

test('when the packed client is installed outside the repository with the one documented command, then a strict TypeScript script creates an order, pays it and receives its order.paid on localhost through ops webhooks listen', async () => {
  // The package as it would be published: built on pack, only what a user needs, no workspace link.
  const [packed] = JSON.parse((await npm(CLIENT, 'pack', '--json', '--pack-destination', project)).stdout) as {
    filename: string;
    files: { path: string }[];
  }[];
  const shipped = packed!.files.map((f) => f.path);
  expect(shipped).toEqual(expect.arrayContaining(['package.json', 'README.md', 'CHANGELOG.md', 'dist/index.js', 'dist/index.d.ts']));
  expect(shipped.filter((path) => !/^dist\/.+\.(js|d\.ts)$/.test(path) && !['package.json', 'README.md', 'CHANGELOG.md'].includes(path))).toEqual([]);
  const readme = readFileSync(join(CLIENT, 'README.md'), 'utf8');
  expect(readme).toContain('npm install @pmatch/client');

  // The README's one command, with the tarball in place of the registry's name.
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'first-day-shop', private: true, type: 'module' }));
  await npm(project, 'install', join(project, packed!.filename));
  await npm(project, 'install', '--save-dev', 'typescript@5.9.3');
  const installed = JSON.parse(readFileSync(join(project, 'node_modules', '@pmatch', 'client', 'package.json'), 'utf8')) as Record<string, unknown>;
  expect(JSON.stringify(installed)).not.toContain('workspace:');
  expect(installed).toMatchObject({ name: '@pmatch/client', version: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
  expect(installed.private).toBeUndefined();

  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  writeFileSync(join(project, 'shop.ts'), SCRIPT);
  await run(process.execPath, [join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { cwd: project });

  const { testKey } = await system.createMerchant({ name: '初日の店' });
  const port = await freePort();
  listener = ListenProcess.start(['--forward-to', `http://127.0.0.1:${port}/webhooks`, '--poll-interval', '200'], {
    PAYMENTS_API_URL: system.apiUrl,
    PAYMENTS_API_KEY: testKey,
  });
  const { secret } = await listener.started();

  const { stdout } = await run(process.execPath, [join(project, 'dist', 'shop.js')], {
    cwd: project,
    env: { PATH: process.env.PATH ?? '', PAYMENTS_API_URL: system.apiUrl, PAYMENTS_API_KEY: testKey, WEBHOOK_SECRET: secret, PORT: String(port) },
  });

  const outcome = JSON.parse(stdout) as Record<string, unknown>;
  expect(outcome).toEqual({
    order_id: expect.stringMatching(/^ord_/),
    created_status: 201,
    request_id: expect.stringMatching(/^req_[0-9a-f]{32}$/),
    payer_name: 'ﾔﾏﾀﾞ ｼﾞﾛｳ',
    deposit_status: 'confirmed',
    event_id: expect.stringMatching(/^evt_/),
    event_type: 'order.paid',
    order_status: 'paid',
    reason: 'exact',
  });
  expect(listener.linesOf('forwarded_event')).toContainEqual(
    expect.objectContaining({ event_id: outcome.event_id, type: 'order.paid', status_code: 204, error: null }),
  );
});

test('when an order is created, found again by its external_id and replayed, then lastResponse tells the three apart, and a refusal is recognised by its operation', async () => {
  const { testKey } = await system.createMerchant({ name: '二日目の店' });
  const payments = new PaymentsClient({ apiKey: testKey, baseUrl: system.apiUrl });
  const body = { amount: 2345, payer_name: bankForm('サトウ ハナコ')!, external_id: 'second-day-1', item_name: '茶葉 200g' };

  const created = await payments.orders.create(body, { idempotencyKey: 'second-day-key' });
  const found = await payments.orders.create(body);
  const replayed = await payments.orders.create(body, { idempotencyKey: 'second-day-key' });
  const refused = await payments.orders.create({ ...body, amount: 2346 }).catch((e: unknown) => e);

  expect([created, found, replayed].map((o) => [o.id, o.lastResponse.statusCode, o.lastResponse.idempotentReplayed])).toEqual([
    [created.id, 201, false],
    [created.id, 200, false],
    [created.id, 201, true],
  ]);
  expect(new Set([created, found, replayed].map((o) => o.lastResponse.requestId)).size).toBe(3);
  expect(ApiError.is(refused, 'createOrder') && refused.code).toBe('external_id_conflict');
  expect(ApiError.is(refused, 'updateOrder')).toBe(false);
});
