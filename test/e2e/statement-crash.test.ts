import { createHash } from 'node:crypto';
import { newId } from '@pmatch/contracts';
import { DATABASE_ROLE, TestSystem, adapterCredentials, waitFor, zenginFile, type SqlSession, type ZenginRecordSpec } from '@pmatch/testkit';
import { zenginReference } from '../../services/bank-ingest/src/domain/statements/references';
import { liveAccount, signedPost } from './support/bank';

/**
 * A statement import is one database transaction: when bank-ingest dies in the middle of one,
 * nothing of the file is stored, and sending the file again stores all of it once.
 */

let system: TestSystem;
let blocker: SqlSession;

beforeAll(async () => {
  system = await TestSystem.start();
  blocker = await system.sqlSession();
});

afterAll(async () => {
  await blocker?.close();
  await system?.stop();
});

const RECORDS = 6_000;
/** The record whose insert is made to wait: batches of 500 before it are written by then. */
const HELD = 4_321;

/** bank-ingest's session inside an import: it has written (it holds a transaction id) and waits for a row lock. */
const waitingImport = async () =>
  (
    await system.sql<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND usename = $1 AND backend_xid IS NOT NULL AND wait_event_type = 'Lock'`,
      [DATABASE_ROLE['bank-ingest']],
    )
  )[0];

describe('statement import and a crash', () => {
  test('when bank-ingest is killed in the middle of a large import, then nothing of the file is stored, and the same file sent again stores every record once', async () => {
    const { orgId } = await system.createMerchant();
    const account = await liveAccount(system, orgId, { number: '8100001' });
    const adapter = adapterCredentials(await system.ops('adapter', 'create', '--name', 'bank', '--bank-account', account));
    const day = new Date(system.now().getTime() + 9 * 3_600_000 - 86_400_000).toISOString().slice(0, 10);
    const records: ZenginRecordSpec[] = Array.from({ length: RECORDS }, (_, i) => ({ date: day, amount: 1_000 + i, name: 'ﾔﾏﾀﾞ ﾀﾛｳ', reference: i + 1 }));
    const file = zenginFile({ kind: '01', accounts: [{ accountNumber: '8100001', records }] });
    const held = records[HELD]!;
    const heldReference = zenginReference({ booked: day, reference: String(held.reference), amount: held.amount, raw: new Uint8Array(), direction: 'deposit' });
    // A row of the held record's (account, reference), inserted and not committed: the import's insert of it waits.
    await blocker.query('BEGIN');
    await blocker.query(
      `INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at, created_at, updated_at, adapter_id)
       VALUES ($1, $2, 'live', $3, $4, 'deposit', 'pending', $5, 'ﾌﾞﾛｯｸ', now(), now(), now(), $6)`,
      [newId('transaction'), orgId, account, heldReference, held.amount, adapter.id],
    );

    let answered: unknown;
    const upload = signedPost(system, '/ingest/v1/statements', adapter, file, 'application/octet-stream').then(
      (answer) => (answered = answer),
      (error: unknown) => error,
    );
    const session = await waitFor(
      async () => {
        if (answered !== undefined) throw new Error(`the upload was answered before it was held: ${JSON.stringify(answered)}`);
        return waitingImport();
      },
      { what: "bank-ingest's import waiting half-way through the file", timeoutMs: 120_000 },
    );
    await system.kill('bank-ingest');
    await blocker.query('ROLLBACK');
    await waitFor(async () => ((await system.sql('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [session.pid])).length === 0 ? true : undefined), {
      what: "the killed import's database session gone",
    });
    await upload;

    const sha256 = createHash('sha256').update(file).digest('hex');
    const stored = async () =>
      (
        await system.sql<{ transactions: number; imports: number; records: number; events: number }>(
          `SELECT (SELECT count(*)::int FROM transactions WHERE bank_account_id = $1) AS transactions,
                  (SELECT count(*)::int FROM statement_imports WHERE file_sha256 = $2) AS imports,
                  (SELECT count(*)::int FROM statement_records r JOIN transactions t ON t.id = r.transaction_id WHERE t.bank_account_id = $1) AS records,
                  (SELECT count(*)::int FROM outbox WHERE message_id IN (SELECT 'deposit_' || id FROM transactions WHERE bank_account_id = $1)) AS events`,
          [account, sha256],
        )
      )[0]!;
    expect(await stored()).toEqual({ transactions: 0, imports: 0, records: 0, events: 0 });

    await system.startService('bank-ingest');
    const again = await signedPost(system, '/ingest/v1/statements', adapter, file, 'application/octet-stream');

    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ object: 'statement_import', records: RECORDS, stored: RECORDS, duplicates: 0 });
    expect(await stored()).toEqual({ transactions: RECORDS, imports: 1, records: RECORDS, events: RECORDS });
    const [distinct] = await system.sql<{ n: number }>('SELECT count(DISTINCT bank_reference)::int AS n FROM transactions WHERE bank_account_id = $1', [
      account,
    ]);
    expect(distinct!.n).toBe(RECORDS);
  }, 300_000);
});
