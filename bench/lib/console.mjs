import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import pg from 'pg';
import { REPO_ROOT } from './system.mjs';
import { round, summarise } from './stats.mjs';

const require = createRequire(import.meta.url);
const ORG = 'org_benchconsole000000001';
const ACCOUNT = 'ba_benchconsole0000000001';
const EMAIL = 'bench-console@example.com';
const PASSWORD = 'bench console password';
const SAMPLES = 30;
const WARM_UP = 3;

/**
 * The seller console at scale: one live organisation with `config.orders` orders and
 * `config.consoleHeld` held deposits, written straight into the database; then, one request at a
 * time over loopback, the console's held list and order searches beside the API's list calls on
 * the same data. The figures are the time to answer (the server's time plus loopback).
 */
export async function runConsolePhase(system, config, log) {
  log(`console: seeding ${config.orders} orders and ${config.consoleHeld} held deposits in one organisation`);
  const apiKey = await seed(system.database.url, config.orders, config.consoleHeld);
  const session = await logIn(system.apiUrl);
  const rareName = `カイイン ${String(Math.max(1, Math.floor(config.orders / 2))).padStart(6, '0')}`;
  const steps = [
    ['console: held deposits, first page', `/dashboard/deposits?status=held`, { cookie: session }],
    ['console: held deposits, by amount', `/dashboard/deposits?status=held&amount=${1000 + Math.floor(config.consoleHeld / 3)}`, { cookie: session }],
    ['console: open orders, first page', '/dashboard/orders?status=open', { cookie: session }],
    ['console: orders by payer name (one match)', `/dashboard/orders?payer_name=${encodeURIComponent(rareName)}`, { cookie: session }],
    ['console: orders by external_id', `/dashboard/orders?external_id=bench-console-${Math.floor(config.orders / 3)}`, { cookie: session }],
    ['API: GET /v1/orders?limit=50', '/v1/orders?limit=50', { authorization: `Bearer ${apiKey}` }],
    ['API: GET /v1/orders?status=open&limit=50', '/v1/orders?status=open&limit=50', { authorization: `Bearer ${apiKey}` }],
    ['API: GET /v1/transactions?status=held&limit=50', '/v1/transactions?status=held&limit=50', { authorization: `Bearer ${apiKey}` }],
  ];
  const results = [];
  for (const [name, path, headers] of steps) {
    const times = [];
    for (let i = 0; i < WARM_UP + SAMPLES; i++) {
      const started = process.hrtime.bigint();
      const res = await fetch(`${system.apiUrl}${path}`, { headers, redirect: 'manual' });
      await res.arrayBuffer();
      if (res.status !== 200)
        throw new Error(`console phase: ${path} answered ${res.status}${res.headers.get('location') ? ` (to ${res.headers.get('location')})` : ''}`);
      if (i >= WARM_UP) times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    const latencyMs = summarise(times);
    results.push({ name, path, latencyMs });
    log(`  ${name}: p50 ${latencyMs.p50} ms, p95 ${latencyMs.p95} ms`);
  }
  return { orders: config.orders, held: config.consoleHeld, samples: SAMPLES, steps: results };
}

async function seed(databaseUrl, orders, held) {
  const { hashPassword } = require(join(REPO_ROOT, 'services/orders-api/dist/domain/passwords.js'));
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const keyText = `svc_live_${randomBytes(24)
    .toString('base64url')
    .replace(/[^0-9A-Za-z]/g, '')
    .padEnd(32, '0')
    .slice(0, 32)}`;
  try {
    await client.query(`INSERT INTO organisations (id, name, owner_email) VALUES ($1, 'ベンチ商店', $2)`, [ORG, EMAIL]);
    await client.query(`INSERT INTO settings (organisation_id, mode) VALUES ($1, 'live'), ($1, 'test')`, [ORG]);
    await client.query(
      `INSERT INTO bank_accounts (id, organisation_id, mode, bank_code, branch_code, account_number, holder_name) VALUES ($1, $2, 'live', '0001', '001', '7777777', 'ﾍﾞﾝﾁ')`,
      [ACCOUNT, ORG],
    );
    await client.query(
      `INSERT INTO api_keys (id, organisation_id, mode, name, permission, key_hash, key_hint) VALUES ('key_benchconsole00001', $1, 'live', 'bench', 'read_write', $2, 'svc_live_...')`,
      [ORG, createHash('sha256').update(keyText).digest('hex')],
    );
    await client.query(
      `INSERT INTO users (id, organisation_id, email, role, password_hash, activated_at) VALUES ('usr_benchconsole00001', $1, $2, 'viewer', $3, now())`,
      [ORG, EMAIL, await hashPassword(PASSWORD)],
    );
    await client.query(
      `INSERT INTO orders (id, organisation_id, mode, bank_account_id, status, amount, payer_name, external_id, item_name, ordered_at, expires_at, payment_token)
       SELECT 'ord_benchconsole' || lpad(n::text, 10, '0'), $1, 'live', $2, 'open', 1000 + n % 5000, 'カイイン ' || lpad(n::text, 6, '0'),
              'bench-console-' || n, 'ベンチ商品', now() - interval '1 hour', now() + interval '14 days', md5(n::text || 'console')
       FROM generate_series(1, $3::int) n`,
      [ORG, ACCOUNT, orders],
    );
    await client.query(
      `INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at, decision, decided_at)
       SELECT 'txn_benchconsole' || lpad(n::text, 10, '0'), $1, 'live', $2, 'console-' || n, 'deposit', 'held', 1000 + n, 'ｶｲｲﾝ ' || n, now(),
              '{"reason": "several_orders_fit", "candidates": []}'::jsonb, now()
       FROM generate_series(1, $3::int) n`,
      [ORG, ACCOUNT, held],
    );
    await client.query('VACUUM (ANALYZE) orders, transactions');
  } finally {
    await client.end();
  }
  return keyText;
}

async function logIn(baseUrl) {
  const form = await fetch(`${baseUrl}/dashboard/login`);
  const cookies = form.headers.getSetCookie().map((c) => c.split(';')[0]);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())[1];
  const res = await fetch(`${baseUrl}/dashboard/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies.join('; ') },
    body: new URLSearchParams({ _csrf: csrf, email: EMAIL, password: PASSWORD }),
  });
  const session = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    // The session's cookie with a value (a log-in may also clear an earlier one).
    .find((c) => /pmatch_session=./.test(c));
  if (res.status !== 303 || session === undefined) throw new Error(`console phase: log-in failed (${res.status})`);
  return session;
}

/** The console phase's lines of the results page. */
export function consoleMarkdown(phase) {
  const lines = [
    `**Console** (${phase.orders.toLocaleString('en-US')} orders and ${phase.held.toLocaleString('en-US')} held deposits in one organisation; one request at a time over loopback, ${phase.samples} samples each after ${WARM_UP} warm-up requests; a console page is a whole rendered HTML page, an API answer one JSON list of 50):`,
    '',
    '| request | p50 | p95 | max |',
    '|---|---:|---:|---:|',
    ...phase.steps.map((s) => `| ${s.name} | ${round(s.latencyMs.p50)} ms | ${round(s.latencyMs.p95)} ms | ${round(s.latencyMs.max)} ms |`),
    '',
  ];
  return lines;
}
