import { mkdtempSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { MIGRATIONS_DIR, createPrisma, ensureDatabase, migrate, type PrismaClient } from '../src';
import { createTestDatabase, databaseUrl, uniqueName, waitFor, type TestDatabase } from '@pmatch/testkit';

describe('schema.prisma and the migrations agree', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrisma(db.url);
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await db?.drop();
  });

  test('when every model is written and read back through Prisma, then every column exists with its type', async () => {
    const now = new Date('2026-11-22T01:02:03.456Z');
    await prisma.organisation.create({ data: { id: 'org_schema', name: 'n', ownerEmail: 'o@example.com', createdAt: now } });
    await prisma.bankAccount.create({
      data: { id: 'ba_schema', organisationId: 'org_schema', mode: 'live', bankCode: '0001', bankName: 'b', branchCode: '001', branchName: 'br', accountNumber: '1234567', holderName: 'h', createdAt: now },
    });
    await prisma.apiKey.create({
      data: { id: 'key_schema', organisationId: 'org_schema', mode: 'live', name: 'k', permission: 'read_only', bankAccountId: 'ba_schema', keyHash: 'h', keyHint: 'svc_live_…abcd', createdAt: now, revokedAt: now },
    });
    await prisma.setting.create({ data: { organisationId: 'org_schema', mode: 'live', autoConfirmLateOrders: true, matchingRules: ['kana_width'], updatedAt: now } });
    await prisma.bankAdapter.create({ data: { id: 'adp_schema', name: 'a', secretEncrypted: 's', createdAt: now, revokedAt: now } });
    const order = await prisma.order.create({
      data: {
        id: 'ord_schema', organisationId: 'org_schema', mode: 'live', bankAccountId: 'ba_schema', status: 'paid', amount: 9_999_999_999n,
        payerName: 'p', externalId: 'e', itemName: 'i', orderedAt: now, expiresAt: now, closedAt: now, metadata: { k: 'v' }, source: 'shop',
        paymentToken: 't', payment: { reason: 'exact' }, createdAt: now, updatedAt: now,
      },
    });
    await prisma.transaction.create({
      data: {
        id: 'txn_schema', organisationId: 'org_schema', mode: 'live', bankAccountId: 'ba_schema', bankReference: 'r', direction: 'deposit',
        status: 'confirmed', amount: 9_999_999_999n, counterparty: 'c', occurredAt: now, orderId: 'ord_schema', candidateOrderIds: ['ord_schema'],
        decision: { reason: 'exact' }, decidedAt: now, createdAt: now, updatedAt: now,
      },
    });
    await prisma.event.create({ data: { id: 'evt_schema', organisationId: 'org_schema', mode: 'live', bankAccountId: 'ba_schema', type: 'order.paid', data: { object: {} }, createdAt: now } });
    await prisma.outbox.create({ data: { messageId: 'm', exchange: 'x', routingKey: 'r', payload: { a: 1 }, headers: { h: 1 }, createdAt: now, publishedAt: now } });
    await prisma.inbox.create({ data: { consumer: 'c', messageId: 'm', processedAt: now } });
    await prisma.idempotencyKey.create({ data: { organisationId: 'org_schema', mode: 'live', key: 'k', requestHash: 'h', responseStatus: 201, responseBody: { id: 'x' }, createdAt: now } });
    await prisma.webhookEndpoint.create({
      data: {
        id: 'we_schema', organisationId: 'org_schema', mode: 'live', url: 'https://example.com/h', secretEncrypted: 's', previousSecretEncrypted: 'p',
        previousSecretExpiresAt: now, enabledEvents: ['order.paid'], enabled: false, disabledReason: 'r', failingSince: now, lastFailureEmailAt: now, createdAt: now, deletedAt: now,
      },
    });
    await prisma.webhookDelivery.create({ data: { id: 'dlv_schema', endpointId: 'we_schema', eventId: 'evt_schema', status: 'failed', attemptCount: 8, maxAttempts: 9, nextAttemptAt: now, createdAt: now, updatedAt: now } });
    await prisma.webhookDeliveryAttempt.create({ data: { deliveryId: 'dlv_schema', attempt: 1, statusCode: 500, durationMs: 12, error: 'e', attemptedAt: now } });
    await prisma.webhookEmail.create({
      data: { id: 'eml_schema', endpointId: 'we_schema', kind: 'delivery_failed', recipient: 'o@example.com', subject: 's', body: 'b', attemptCount: 1, lastError: 'e', sentAt: now, createdAt: now },
    });

    expect(order.amount).toBe(9_999_999_999n);
    const counts = await Promise.all([
      prisma.organisation.count(), prisma.bankAccount.count(), prisma.apiKey.count(), prisma.setting.count(), prisma.bankAdapter.count(),
      prisma.order.count(), prisma.transaction.count(), prisma.event.count(), prisma.outbox.count(), prisma.inbox.count(),
      prisma.idempotencyKey.count(), prisma.webhookEndpoint.count(), prisma.webhookDelivery.count(), prisma.webhookDeliveryAttempt.count(),
      prisma.webhookEmail.count(),
    ]);
    expect(counts).toEqual(Array(15).fill(1));
    const read = await prisma.transaction.findUniqueOrThrow({ where: { id: 'txn_schema' } });
    expect(read).toMatchObject({ occurredAt: now, candidateOrderIds: ['ord_schema'], decision: { reason: 'exact' } });
  });

  test('when a row breaks an invariant Prisma cannot express, then the database refuses it', async () => {
    await expect(
      prisma.order.create({
        data: {
          id: 'ord_bad', organisationId: 'org_schema', mode: 'live', bankAccountId: 'ba_schema', status: 'paid', amount: 1n, payerName: 'p',
          externalId: 'bad', itemName: 'i', orderedAt: new Date(), expiresAt: new Date(), paymentToken: 'bad',
        },
      }),
    ).rejects.toThrow(); // paid without a payment
    await expect(
      prisma.order.create({
        data: {
          id: 'ord_neg', organisationId: 'org_schema', mode: 'live', bankAccountId: 'ba_schema', status: 'open', amount: -5n, payerName: 'p',
          externalId: 'neg', itemName: 'i', orderedAt: new Date(), expiresAt: new Date(), paymentToken: 'neg',
        },
      }),
    ).rejects.toThrow(); // negative money
    await expect(prisma.order.count({ where: { id: { in: ['ord_bad', 'ord_neg'] } } })).resolves.toBe(0);
  });
});

describe('migration runner', () => {
  test('when run on a new database, then it applies every migration once and records it as Prisma does', async () => {
    const url = databaseUrl(uniqueName('pmatch_m_'));
    await ensureDatabase(url);
    try {
      const [a, b] = await Promise.all([migrate(url), migrate(url)]);
      const again = await migrate(url);

      const all = readdirSync(MIGRATIONS_DIR).sort();
      expect([...a.applied, ...b.applied].sort()).toEqual(all);
      expect(again).toEqual({ applied: [], alreadyApplied: all });
      const client = new Client({ connectionString: url });
      await client.connect();
      const rows = await client.query('SELECT migration_name, checksum, finished_at FROM "_prisma_migrations"');
      await client.end();
      expect(rows.rows).toHaveLength(all.length);
      expect(rows.rows[0].checksum).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await dropDatabase(url);
    }
  });

  test('when an applied migration was edited, then the runner refuses to go on', async () => {
    const url = databaseUrl(uniqueName('pmatch_m_'));
    const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    mkdirSync(join(dir, '001_first'));
    writeFileSync(join(dir, '001_first', 'migration.sql'), 'CREATE TABLE t (id int);');
    await ensureDatabase(url);
    try {
      await migrate(url, dir);
      writeFileSync(join(dir, '001_first', 'migration.sql'), 'CREATE TABLE t (id bigint);');

      await expect(migrate(url, dir)).rejects.toThrow(/001_first was changed/);
    } finally {
      await dropDatabase(url);
    }
  });

  test('when a migration fails, then nothing of it remains and it is not recorded', async () => {
    const url = databaseUrl(uniqueName('pmatch_m_'));
    const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    mkdirSync(join(dir, '001_broken'));
    writeFileSync(join(dir, '001_broken', 'migration.sql'), 'CREATE TABLE half (id int); SELECT * FROM missing_table;');
    await ensureDatabase(url);
    try {
      await expect(migrate(url, dir)).rejects.toThrow(/001_broken failed/);
      const client = new Client({ connectionString: url });
      await client.connect();
      const tables = await client.query(`SELECT to_regclass('half') AS half`);
      const recorded = await client.query('SELECT count(*)::int AS n FROM "_prisma_migrations"');
      await client.end();
      expect(tables.rows[0].half).toBeNull();
      expect(recorded.rows[0].n).toBe(0);
    } finally {
      await dropDatabase(url);
    }
  });
});

async function dropDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const admin = new Client({ connectionString: databaseUrl('postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
}

describe('least privilege', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    const admin = new Client({ connectionString: db.url });
    await admin.connect();
    await admin.query(`INSERT INTO organisations (id, name, owner_email) VALUES ('org_p', 'n', 'o@example.com')`);
    await admin.query(`INSERT INTO bank_accounts (id, organisation_id, mode, bank_code, branch_code, account_number, holder_name)
                       VALUES ('ba_p', 'org_p', 'test', '9999', '001', '1234567', 'h')`);
    await admin.query(`INSERT INTO orders (id, organisation_id, mode, bank_account_id, status, amount, payer_name, external_id, item_name, ordered_at, expires_at, payment_token)
                       VALUES ('ord_p', 'org_p', 'test', 'ba_p', 'open', 100, 'p', 'e', 'i', now(), now() + interval '1 day', 'tok')`);
    await admin.query(`INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at)
                       VALUES ('txn_p', 'org_p', 'test', 'ba_p', 'r', 'deposit', 'pending', 100, 'p', now())`);
    await admin.end();
  });
  afterAll(async () => {
    await db?.drop();
  });

  async function as(role: string, sql: string): Promise<void> {
    const url = new URL(db.url);
    url.username = role;
    const client = new Client({ connectionString: url.toString() });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }

  test.each([
    ['pmatch_orders_api', `UPDATE transactions SET status = 'unmatched' WHERE id = 'txn_p'`],
    ['pmatch_orders_api', `INSERT INTO api_keys (id, organisation_id, mode, name, permission, key_hash, key_hint) VALUES ('key_x', 'org_p', 'test', 'n', 'read_write', 'h', 'h')`],
    ['pmatch_bank_ingest', `UPDATE orders SET status = 'canceled', closed_at = now() WHERE id = 'ord_p'`],
    ['pmatch_bank_ingest', `UPDATE transactions SET amount = 1 WHERE id = 'txn_p'`],
    ['pmatch_matcher', `INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at)
                        VALUES ('txn_x', 'org_p', 'test', 'ba_p', 'x', 'deposit', 'pending', 100, 'p', now())`],
    ['pmatch_matcher', `DELETE FROM events`],
    ['pmatch_webhook_dispatcher', `UPDATE orders SET amount = 1 WHERE id = 'ord_p'`],
    ['pmatch_ops', `UPDATE transactions SET status = 'unmatched' WHERE id = 'txn_p'`],
  ])('when %s tries a write its service does not own, then the database refuses it', async (role, sql) => {
    await expect(as(role, sql)).rejects.toThrow(/permission denied/);
  });

  test('when each service does the writes it owns, then the database allows them', async () => {
    await as('pmatch_orders_api', `UPDATE orders SET payer_name = 'q' WHERE id = 'ord_p'`);
    await as('pmatch_bank_ingest', `INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at)
                                    VALUES ('txn_b', 'org_p', 'test', 'ba_p', 'b', 'deposit', 'pending', 100, 'p', now())`);
    await as('pmatch_matcher', `UPDATE transactions SET status = 'unmatched' WHERE id = 'txn_p'`);
    await as('pmatch_ops', `UPDATE organisations SET name = 'm' WHERE id = 'org_p'`);
  });
});

describe('createPrisma', () => {
  test('when the server ends idle connections, then the pool reports it and the next query works', async () => {
    const db = await createTestDatabase();
    const lost: Error[] = [];
    const client = createPrisma(db.url, { poolSize: 2, onIdleConnectionError: (error) => lost.push(error) });
    try {
      await client.organisation.count();
      const admin = new Client({ connectionString: databaseUrl('postgres') });
      await admin.connect();
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [new URL(db.url).pathname.slice(1)]);
      await admin.end();
      await waitFor(() => (lost.length > 0 ? true : undefined), { what: 'the pool to report the lost connections' });

      await expect(client.organisation.count()).resolves.toBe(0);
    } finally {
      await client.$disconnect();
      await db.drop();
    }
  });
});
