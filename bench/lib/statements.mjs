/**
 * The statement-import step: a Zengin 03 file of N records over the pipeline's accounts, posted to
 * POST /ingest/v1/statements, against a bare baseline on the same run (the same rows stored with
 * the same statements, bank-ingest's own from its build, with no parsing and no checks), and the
 * bank-ingest process's peak memory while it imports files of two sizes.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { round, waitUntil } from './stats.mjs';
import { REPO_ROOT } from './system.mjs';

const require = createRequire(import.meta.url);
const BATCH = 500;
/** ﾔﾏﾀﾞ ﾀﾛｳ in JIS X 0201: the name every record carries (ﾞ a byte of its own). */
const NAME = Buffer.from([0xd4, 0xcf, 0xc0, 0xde, 0x20, 0xc0, 0xdb, 0xb3]);

/** 令和 YYMMDD of a Gregorian YYYY-MM-DD (the bench's days are all 令和). */
const wareki = (day) => `${String(Number(day.slice(0, 4)) - 2018).padStart(2, '0')}${day.slice(5, 7)}${day.slice(8, 10)}`;

function record(fields) {
  const bytes = Buffer.alloc(200, 0x20);
  for (const [from, value] of fields) (typeof value === 'string' ? Buffer.from(value, 'latin1') : value).copy(bytes, from - 1);
  return bytes;
}

const digits = (value, width) => String(value).padStart(width, '0');

/**
 * A Zengin 03 file (CRLF) of `count` records spread over the accounts, one in twenty a
 * withdrawal, every record with its own 照会番号 (offset by `first`), and the rows the import will store.
 */
export function statementFile(accounts, count, day, first = 0) {
  const parts = [];
  const rows = [];
  const perAccount = Math.ceil(count / accounts.length);
  let records = 0;
  let groups = 0;
  for (const [a, account] of accounts.entries()) {
    const n = Math.min(perAccount, count - a * perAccount);
    if (n <= 0) break;
    groups += 1;
    parts.push(
      record([
        [1, '1030'],
        [5, wareki(day)],
        [11, wareki(day)],
        [17, wareki(day)],
        [23, '0001'],
        [42, '001'],
        [60, '0001'],
        [64, digits(account.number, 10)],
        [114, '1'],
        [115, '1'],
        [116, digits(0, 14)],
      ]),
    );
    let credits = 0,
      creditSum = 0,
      debits = 0,
      debitSum = 0;
    for (let i = 0; i < n; i++) {
      const reference = first + records + i + 1;
      const amount = 1_000 + (reference % 90_000);
      const out = reference % 20 === 0;
      const bytes = record([
        [1, '2'],
        [2, digits(reference, 8)],
        [10, wareki(day)],
        [16, wareki(day)],
        [22, out ? '2' : '1'],
        [23, '11'],
        [25, digits(amount, 12)],
        [37, digits(0, 12)],
        [82, NAME],
      ]);
      parts.push(bytes);
      rows.push({ account, reference: `zengin:${day.replace(/-/g, '')}:${reference}:${amount}${out ? ':out' : ''}`, amount, out, raw: bytes });
      if (out) {
        debits += 1;
        debitSum += amount;
      } else {
        credits += 1;
        creditSum += amount;
      }
    }
    records += n;
    parts.push(
      record([
        [1, '8'],
        [2, digits(credits, 6)],
        [8, digits(creditSum, 13)],
        [21, digits(debits, 6)],
        [27, digits(debitSum, 13)],
        [40, '1'],
        [41, digits(creditSum - debitSum, 14)],
        [55, digits(n, 7)],
      ]),
    );
  }
  parts.push(
    record([
      [1, '9'],
      [2, digits(parts.length + 1, 10)],
      [12, digits(groups, 5)],
    ]),
  );
  const crlf = Buffer.from('\r\n');
  return { file: Buffer.concat(parts.flatMap((p) => [p, crlf])), rows };
}

/** The bare baseline: the same rows through bank-ingest's own statements, in batches of the import's size, no file at all. */
async function storeBare(databaseUrl, rows, at) {
  const { createDatabase } = require(join(REPO_ROOT, 'packages/db/dist/index.js'));
  const { insertNewDeposits } = require(join(REPO_ROOT, 'services/bank-ingest/dist/data/transactions.js'));
  const { beginImport, finishImport, storeImportedWithdrawals } = require(join(REPO_ROOT, 'services/bank-ingest/dist/data/statement-imports.js'));
  const database = createDatabase(databaseUrl, { poolSize: 2 });
  try {
    const started = process.hrtime.bigint();
    const incoming = (row) => ({
      organisationId: row.account.organisationId,
      mode: 'live',
      bankAccountId: row.account.id,
      bankReference: row.reference,
      direction: row.out ? 'withdrawal' : 'deposit',
      amount: row.amount,
      counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ',
      occurredAt: at,
    });
    // One transaction, as an import stores its file: all or nothing.
    await database.transaction(async (tx) => {
      const imported = await beginImport(tx, { format: 'zengin', sha256: 'bare', bytes: 0, accounts: 0, records: rows.length, at });
      for (let i = 0; i < rows.length; i += BATCH) {
        const batch = rows.slice(i, i + BATCH);
        const deposits = batch.filter((r) => !r.out);
        // Unleased: this process has no relay, and the services' relays publish them at once, as they do an import's.
        await insertNewDeposits(
          tx,
          deposits.map((r) => ({ incoming: incoming(r), at })),
          () => undefined,
          { importId: imported.id, records: deposits.map((r, k) => ({ line: i + k + 2, raw: r.raw })) },
        );
        const withdrawals = batch.filter((r) => r.out);
        await storeImportedWithdrawals(
          tx,
          imported.id,
          withdrawals.map((r, k) => ({ incoming: incoming(r), line: i + k + 2, raw: r.raw })),
          at,
        );
      }
      await finishImport(tx, imported.id, { stored: rows.length, duplicates: 0, withdrawals: rows.filter((r) => r.out).length }, at);
    });
    return Number(process.hrtime.bigint() - started) / 1e9;
  } finally {
    await database.prisma.$disconnect();
  }
}

/** The resident memory of a process (KiB), from /proc. */
function rssKiB(pid) {
  const match = /VmRSS:\s+([0-9]+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : 0;
}

/** Posts a statement signed by the adapter as bank-ingest checks it; resolves with the answer, the seconds taken and bank-ingest's peak RSS growth. */
async function importFile(system, adapter, file) {
  const pid = system.pids()['bank-ingest'];
  const before = pid ? rssKiB(pid) : 0;
  let peak = before;
  const sampler = pid ? setInterval(() => (peak = Math.max(peak, rssKiB(pid))), 20) : undefined;
  const id = `msg_${randomUUID()}`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const hmac = createHmac('sha256', Buffer.from(adapter.secret.replace(/^whsec_/, ''), 'base64'))
    .update(`${id}.${timestamp}.`)
    .update(file);
  const started = process.hrtime.bigint();
  try {
    const res = await fetch(`${system.ingestUrl}/ingest/v1/statements`, {
      method: 'POST',
      headers: {
        'content-type': 'application/octet-stream',
        'bank-adapter-id': adapter.id,
        'webhook-id': id,
        'webhook-timestamp': timestamp,
        'webhook-signature': `v1,${hmac.digest('base64')}`,
      },
      body: file,
    });
    const body = await res.json();
    return { status: res.status, body, seconds: Number(process.hrtime.bigint() - started) / 1e9, peakRssGrowthMiB: round((peak - before) / 1024, 1) };
  } finally {
    clearInterval(sampler);
  }
}

/**
 * Waits until the matcher has decided every deposit of the run: bounded by ten minutes, or 10 ms a
 * deposit for more (a file's deposits name no order, and are decided at the matcher's rate).
 */
async function drained(system, deposits) {
  await waitUntil(async () => ((await system.sql(`SELECT count(*)::int AS n FROM transactions WHERE status = 'pending'`))[0].n === 0 ? true : undefined), {
    timeoutMs: Math.max(10 * 60_000, deposits * 10),
    intervalMs: 500,
    what: 'the imported deposits to be decided',
  });
}

export async function runStatementsPhase(config, system, log, failures) {
  const ops = await system.operator();
  const organisation = await ops.createOrganisation('明細ベンチ商店', 'statements@example.com');
  const accounts = [];
  for (let a = 0; a < config.accounts; a++) {
    const number = 5_000_000 + a;
    const account = await ops.addLiveBankAccount({
      organisationId: organisation.id,
      bankCode: '0001',
      branchCode: '001',
      accountType: 'ordinary',
      accountNumber: String(number),
      holderName: 'ﾒｲｻｲ',
    });
    accounts.push({ id: account.id, organisationId: organisation.id, number });
  }
  const adapter = await ops.createBankAdapter(
    'bench-statements',
    accounts.map((a) => a.id),
  );
  const day = new Date(Date.now() + 9 * 3_600_000 - 86_400_000).toISOString().slice(0, 10);
  const n = config.statementRecords;
  const out = { records: n, accounts: accounts.length, withdrawalsShare: '1 in 20', batch: BATCH, sizes: [] };

  const bare = statementFile(accounts, n, day, 10_000_000);
  log(`statements: bare baseline, ${n} rows with bank-ingest's statements (no file, no checks)`);
  const bareSeconds = await storeBare(system.database.url, bare.rows, new Date());
  out.baseline = { seconds: round(bareSeconds, 2), recordsPerSecond: round(n / bareSeconds) };
  log(`  ${out.baseline.recordsPerSecond} records/s`);
  await drained(system, n);

  let first = 0;
  for (const size of [n, 2 * n]) {
    const { file } = statementFile(accounts, size, day, first);
    first += size;
    log(`statements: importing a Zengin 03 file of ${size} records (${round(file.length / 1024 / 1024, 1)} MiB) over ${accounts.length} accounts`);
    const answer = await importFile(system, adapter, file);
    if (answer.status !== 200 || answer.body.stored !== size)
      failures.push(`statement import of ${size} records answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
    out.sizes.push({
      records: size,
      mebibytes: round(file.length / 1024 / 1024, 1),
      seconds: round(answer.seconds, 2),
      recordsPerSecond: round(size / answer.seconds),
      peakRssGrowthMiB: answer.peakRssGrowthMiB,
    });
    log(`  ${round(size / answer.seconds)} records/s, bank-ingest RSS +${answer.peakRssGrowthMiB} MiB at its peak`);
    await drained(system, size);
  }
  out.importToBaseline = round(out.sizes[0].recordsPerSecond / out.baseline.recordsPerSecond, 3);
  return out;
}
