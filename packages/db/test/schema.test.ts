import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { EDITED_MIGRATION_CHECKSUMS, MIGRATIONS_DIR, createPrisma, ensureDatabase, migrate, type PrismaClient } from '../src';
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
    await prisma.organisation.create({ data: { id: 'org_schema', name: 'n', ownerEmail: 'o@example.com', requireAdminTotp: true, createdAt: now } });
    await prisma.bankAccount.create({
      data: {
        id: 'ba_schema',
        organisationId: 'org_schema',
        mode: 'live',
        bankCode: '0001',
        bankName: 'b',
        branchCode: '001',
        branchName: 'br',
        accountType: 'savings',
        accountNumber: '1234567',
        holderName: 'h',
        createdAt: now,
      },
    });
    await prisma.apiKey.create({
      data: {
        id: 'key_schema',
        organisationId: 'org_schema',
        mode: 'live',
        name: 'k',
        permission: 'read_only',
        bankAccountId: 'ba_schema',
        keyHash: 'h',
        keyHint: 'svc_live_…abcd',
        createdAt: now,
        revokedAt: now,
        lastUsedAt: now,
      },
    });
    await prisma.setting.create({
      data: { organisationId: 'org_schema', mode: 'live', autoConfirmLateOrders: true, matchingRules: ['kana_width'], updatedAt: now },
    });
    await prisma.bankAdapter.create({ data: { id: 'adp_schema', name: 'a', secretEncrypted: 's', createdAt: now, revokedAt: now } });
    await prisma.bankAdapterAccount.create({ data: { adapterId: 'adp_schema', bankAccountId: 'ba_schema', createdAt: now } });
    await prisma.paymentLink.create({
      data: {
        id: 'plink_schema',
        organisationId: 'org_schema',
        mode: 'live',
        bankAccountId: 'ba_schema',
        amount: 9_999_999_999n,
        itemName: 'i',
        metadata: { k: 'v' },
        expiresAt: now,
        useLimit: 5,
        useCount: 1,
        token: 'lt',
        deactivatedAt: now,
        createdAt: now,
        updatedAt: now,
      },
    });
    await prisma.order.create({
      data: {
        id: 'ord_schema_link',
        organisationId: 'org_schema',
        mode: 'live',
        bankAccountId: 'ba_schema',
        status: 'open',
        amount: 1n,
        payerName: 'p',
        externalId: 'link',
        itemName: 'i',
        orderedAt: now,
        expiresAt: now,
        source: 'payment_link',
        paymentLinkId: 'plink_schema',
        paymentToken: 'lt',
        createdAt: now,
        updatedAt: now,
      },
    });
    const order = await prisma.order.create({
      data: {
        id: 'ord_schema',
        organisationId: 'org_schema',
        mode: 'live',
        bankAccountId: 'ba_schema',
        status: 'paid',
        amount: 9_999_999_999n,
        payerName: 'p',
        externalId: 'e',
        itemName: 'i',
        orderedAt: now,
        expiresAt: now,
        closedAt: now,
        metadata: { k: 'v' },
        source: 'shop',
        paymentToken: 't',
        payment: { reason: 'exact' },
        createdAt: now,
        updatedAt: now,
      },
    });
    await prisma.transaction.create({
      data: {
        id: 'txn_schema',
        organisationId: 'org_schema',
        mode: 'live',
        bankAccountId: 'ba_schema',
        bankReference: 'r',
        direction: 'deposit',
        status: 'confirmed',
        amount: 9_999_999_999n,
        counterparty: 'c',
        occurredAt: now,
        orderId: 'ord_schema',
        candidateOrderIds: ['ord_schema'],
        decision: { reason: 'exact' },
        decidedAt: now,
        createdAt: now,
        updatedAt: now,
        adapterId: 'adp_schema',
        statementImport: {
          create: {
            id: 'imp_schema',
            adapterId: 'adp_schema',
            format: 'zengin',
            fileSha256: 'h',
            fileBytes: 1_000n,
            accounts: 1,
            records: 2,
            stored: 1,
            duplicates: 1,
            withdrawals: 0,
            status: 'stored',
            createdAt: now,
            finishedAt: now,
          },
        },
      },
    });
    await prisma.statementRecord.create({
      data: { transactionId: 'txn_schema', statementImportId: 'imp_schema', line: 2, raw: Buffer.from([0xb6, 0xde]), cancelsTransactionId: 'txn_schema' },
    });
    await prisma.event.create({
      data: {
        id: 'evt_schema',
        organisationId: 'org_schema',
        mode: 'live',
        bankAccountId: 'ba_schema',
        type: 'order.paid',
        data: { object: {} },
        createdAt: now,
      },
    });
    await prisma.outbox.create({
      data: { messageId: 'm', exchange: 'x', routingKey: 'r', payload: { a: 1 }, headers: { h: 1 }, createdAt: now, publishedAt: now },
    });
    await prisma.inbox.create({ data: { consumer: 'c', messageId: 'm', processedAt: now } });
    await prisma.idempotencyKey.create({
      data: {
        apiKeyId: 'key_schema',
        organisationId: 'org_schema',
        mode: 'live',
        key: 'k',
        requestHash: 'h',
        responseStatus: 201,
        responseBody: { id: 'x' },
        createdAt: now,
      },
    });
    await prisma.webhookEndpoint.create({
      data: {
        id: 'we_schema',
        organisationId: 'org_schema',
        mode: 'live',
        url: 'https://example.com/h',
        secretEncrypted: 's',
        previousSecretEncrypted: 'p',
        previousSecretExpiresAt: now,
        enabledEvents: ['order.paid'],
        enabled: false,
        disabledReason: 'r',
        failingSince: now,
        lastFailureEmailAt: now,
        createdAt: now,
        deletedAt: now,
      },
    });
    await prisma.webhookDelivery.create({
      data: {
        id: 'dlv_schema',
        endpointId: 'we_schema',
        eventId: 'evt_schema',
        status: 'failed',
        attemptCount: 8,
        maxAttempts: 9,
        nextAttemptAt: now,
        createdAt: now,
        updatedAt: now,
      },
    });
    await prisma.webhookDeliveryAttempt.create({
      data: { deliveryId: 'dlv_schema', endpointId: 'we_schema', attempt: 1, statusCode: 500, durationMs: 12, error: 'e', attemptedAt: now },
    });
    await prisma.user.create({
      data: {
        id: 'usr_schema',
        organisationId: 'org_schema',
        email: 'u@example.com',
        role: 'admin',
        passwordHash: 'h',
        passwordSetupHash: 's',
        passwordSetupExpiresAt: now,
        totpSecretEncrypted: 't',
        totpEnabledAt: now,
        totpLastStep: 123n,
        activatedAt: now,
        createdAt: now,
        updatedAt: now,
      },
    });
    await prisma.consoleSession.create({
      data: {
        idHash: 'h',
        userId: 'usr_schema',
        csrfToken: 'c',
        mode: 'live',
        secondFactorPending: true,
        secondFactorFailures: 2,
        ip: '127.0.0.1',
        createdAt: now,
        lastSeenAt: now,
      },
    });
    await prisma.userRecoveryCode.create({ data: { userId: 'usr_schema', codeHash: 'c', createdAt: now, usedAt: now } });
    await prisma.consoleDisplay.create({ data: { id: 'dsp_schema', sessionIdHash: 'h', kind: 'api_key', sealed: 's', createdAt: now, expiresAt: now } });
    await prisma.auditLog.create({
      data: {
        organisationId: 'org_schema',
        mode: 'live',
        userId: 'usr_schema',
        userEmail: 'u@example.com',
        action: 'a',
        objectId: 'o',
        detail: { k: 1 },
        ip: '::1',
        createdAt: now,
      },
    });
    await prisma.webhookEmail.create({
      data: {
        id: 'eml_schema',
        endpointId: 'we_schema',
        kind: 'delivery_failed',
        recipient: 'o@example.com',
        subject: 's',
        body: 'b',
        attemptCount: 1,
        lastError: 'e',
        sentAt: now,
        createdAt: now,
      },
    });
    await prisma.webhookTestSend.create({
      data: { endpointId: 'we_schema', eventId: 'evt_test_schema', statusCode: null, durationMs: 5, error: 'e', sentAt: now },
    });

    expect(order.amount).toBe(9_999_999_999n);
    const counts = await Promise.all([
      prisma.organisation.count(),
      prisma.bankAccount.count(),
      prisma.apiKey.count(),
      prisma.setting.count(),
      prisma.bankAdapter.count(),
      prisma.order.count(),
      prisma.transaction.count(),
      prisma.event.count(),
      prisma.outbox.count(),
      prisma.inbox.count(),
      prisma.idempotencyKey.count(),
      prisma.webhookEndpoint.count(),
      prisma.webhookDelivery.count(),
      prisma.webhookDeliveryAttempt.count(),
      prisma.webhookEmail.count(),
      prisma.bankAdapterAccount.count(),
      prisma.statementImport.count(),
      prisma.statementRecord.count(),
      prisma.user.count(),
      prisma.consoleSession.count(),
      prisma.auditLog.count(),
      prisma.paymentLink.count(),
      prisma.userRecoveryCode.count(),
      prisma.consoleDisplay.count(),
      prisma.webhookTestSend.count(),
    ]);
    expect(counts).toEqual([1, 1, 1, 1, 1, 2, ...Array(19).fill(1)]);
    expect((await prisma.statementRecord.findUniqueOrThrow({ where: { transactionId: 'txn_schema' } })).raw).toEqual(new Uint8Array([0xb6, 0xde]));
    const read = await prisma.transaction.findUniqueOrThrow({ where: { id: 'txn_schema' } });
    expect(read).toMatchObject({ occurredAt: now, candidateOrderIds: ['ord_schema'], decision: { reason: 'exact' } });
  });

  test('when a row breaks an invariant Prisma cannot express, then the database refuses it', async () => {
    await expect(
      prisma.order.create({
        data: {
          id: 'ord_bad',
          organisationId: 'org_schema',
          mode: 'live',
          bankAccountId: 'ba_schema',
          status: 'paid',
          amount: 1n,
          payerName: 'p',
          externalId: 'bad',
          itemName: 'i',
          orderedAt: new Date(),
          expiresAt: new Date(),
          paymentToken: 'bad',
        },
      }),
    ).rejects.toThrow(); // paid without a payment
    await expect(
      prisma.order.create({
        data: {
          id: 'ord_neg',
          organisationId: 'org_schema',
          mode: 'live',
          bankAccountId: 'ba_schema',
          status: 'open',
          amount: -5n,
          payerName: 'p',
          externalId: 'neg',
          itemName: 'i',
          orderedAt: new Date(),
          expiresAt: new Date(),
          paymentToken: 'neg',
        },
      }),
    ).rejects.toThrow(); // negative money
    await expect(prisma.order.count({ where: { id: { in: ['ord_bad', 'ord_neg'] } } })).resolves.toBe(0);
  });

  test("when a second open order goes on an account given per order, or a buyer's reference on an order of a shared account, then the database refuses it; every order gets its account's transfer_to", async () => {
    await prisma.organisation.create({ data: { id: 'org_dedicated', name: 'n', ownerEmail: 'o@example.com' } });
    await prisma.bankAccount.create({
      data: {
        id: 'ba_dedicated',
        organisationId: 'org_dedicated',
        mode: 'live',
        bankCode: '0310',
        branchCode: '101',
        accountNumber: '2000001',
        holderName: 'ｶ)ｱｸﾒ',
        dedicated: true,
      },
    });
    const order = (id: string, fields: { dedicated?: boolean; customerReference?: string; transferTo?: object } = {}) =>
      prisma.order.create({
        data: {
          id,
          organisationId: 'org_dedicated',
          mode: 'live',
          bankAccountId: 'ba_dedicated',
          status: 'open',
          amount: 100n,
          payerName: 'p',
          externalId: id,
          itemName: 'i',
          orderedAt: new Date(),
          expiresAt: new Date(),
          paymentToken: id,
          ...fields,
        },
      });

    const first = await order('ord_dedicated_1', { dedicated: true, transferTo: { account_number: 'forged' } });
    const second = order('ord_dedicated_2', { dedicated: true });
    const referenceAlone = order('ord_reference_alone', { customerReference: 'c' });

    await expect(second).rejects.toThrow(); // orders_dedicated_open_idx
    await expect(referenceAlone).rejects.toThrow(); // orders_customer_reference_dedicated
    expect(first.transferTo).toEqual({
      bank_code: '0310',
      bank_name: null,
      branch_code: '101',
      branch_name: null,
      account_type: 'ordinary',
      account_number: '2000001',
      holder_name: 'ｶ)ｱｸﾒ',
    });
    await expect(order('ord_buyer_1', { dedicated: true, customerReference: 'c' })).resolves.toMatchObject({ customerReference: 'c' });
  });

  test('when a payment link would sell more than its use limit, or an order claims a link it has not, then the database refuses it', async () => {
    const now = new Date();
    await prisma.paymentLink.create({
      data: {
        id: 'plink_full',
        organisationId: 'org_schema',
        mode: 'live',
        bankAccountId: 'ba_schema',
        amount: 1n,
        itemName: 'i',
        useLimit: 1,
        useCount: 1,
        token: 'full',
        createdAt: now,
        updatedAt: now,
      },
    });
    const linkOrder = (id: string, data: { source: string | null; paymentLinkId: string | null }) =>
      prisma.order.create({
        data: {
          id,
          organisationId: 'org_schema',
          mode: 'live',
          bankAccountId: 'ba_schema',
          status: 'open',
          amount: 1n,
          payerName: 'p',
          externalId: id,
          itemName: 'i',
          orderedAt: now,
          expiresAt: now,
          paymentToken: id,
          ...data,
        },
      });

    await expect(prisma.paymentLink.update({ where: { id: 'plink_full' }, data: { useCount: 2 } })).rejects.toThrow();
    await expect(linkOrder('ord_no_link', { source: 'payment_link', paymentLinkId: null })).rejects.toThrow();
    await expect(linkOrder('ord_link_no_source', { source: null, paymentLinkId: 'plink_full' })).rejects.toThrow();
    await expect(linkOrder('ord_other_source', { source: 'market', paymentLinkId: null })).rejects.toThrow();
    expect(await prisma.paymentLink.findUniqueOrThrow({ where: { id: 'plink_full' } })).toMatchObject({ useCount: 1 });
  });

  test.each([
    ['another mode', 'org_scope', 'test'],
    ['another organisation', 'org_scope_other', 'live'],
    ['its own organisation and mode', 'org_scope', 'live'],
  ])(
    "when an order or a deposit is of %s (bank account: org_scope, live), then the database stores it only if both are the account's",
    async (_case, organisationId, mode) => {
      for (const id of ['org_scope', 'org_scope_other']) {
        await prisma.organisation.upsert({ where: { id }, create: { id, name: 'n', ownerEmail: 'o@example.com' }, update: {} });
      }
      await prisma.bankAccount.upsert({
        where: { id: 'ba_scope' },
        create: { id: 'ba_scope', organisationId: 'org_scope', mode: 'live', bankCode: '0001', branchCode: '001', accountNumber: '7654321', holderName: 'h' },
        update: {},
      });
      const now = new Date();
      const suffix = `${organisationId}_${mode}`;
      const order = () =>
        prisma.order.create({
          data: {
            id: `ord_${suffix}`,
            organisationId,
            mode,
            bankAccountId: 'ba_scope',
            status: 'open',
            amount: 1n,
            payerName: 'p',
            externalId: suffix,
            itemName: 'i',
            orderedAt: now,
            expiresAt: now,
            paymentToken: suffix,
          },
        });
      const deposit = () =>
        prisma.transaction.create({
          data: {
            id: `txn_${suffix}`,
            organisationId,
            mode,
            bankAccountId: 'ba_scope',
            bankReference: suffix,
            direction: 'deposit',
            status: 'pending',
            amount: 1n,
            counterparty: 'c',
            occurredAt: now,
          },
        });
      const ofItsAccount = organisationId === 'org_scope' && mode === 'live';
      if (ofItsAccount) {
        await expect(order()).resolves.toMatchObject({ bankAccountId: 'ba_scope' });
        await expect(deposit()).resolves.toMatchObject({ bankAccountId: 'ba_scope' });
      } else {
        await expect(order()).rejects.toThrow(/orders_bank_account_scope_fkey/);
        await expect(deposit()).rejects.toThrow(/transactions_bank_account_scope_fkey/);
      }
      await expect(prisma.order.count({ where: { id: `ord_${suffix}` } })).resolves.toBe(ofItsAccount ? 1 : 0);
      await expect(prisma.transaction.count({ where: { id: `txn_${suffix}` } })).resolves.toBe(ofItsAccount ? 1 : 0);
    },
  );

  test("when an attempt is logged with no endpoint or another one, then it carries its delivery's endpoint; with no delivery it is refused", async () => {
    await prisma.webhookEndpoint.create({
      data: { id: 'we_other', organisationId: 'org_schema', mode: 'live', url: 'https://example.com/o', secretEncrypted: 's' },
    });
    // As a dispatcher of an earlier version writes it: no endpoint.
    await prisma.$executeRaw`INSERT INTO webhook_delivery_attempts (delivery_id, attempt, duration_ms) VALUES ('dlv_schema', 2, 5)`;
    await prisma.webhookDeliveryAttempt.create({ data: { deliveryId: 'dlv_schema', endpointId: 'we_other', attempt: 3, durationMs: 5 } });
    const moved = await prisma.webhookDeliveryAttempt.create({ data: { deliveryId: 'dlv_schema', endpointId: 'we_schema', attempt: 4, durationMs: 5 } });
    await prisma.webhookDeliveryAttempt.update({ where: { id: moved.id }, data: { endpointId: 'we_other' } });

    const logged = await prisma.webhookDeliveryAttempt.findMany({ where: { deliveryId: 'dlv_schema', attempt: { gte: 2 } }, orderBy: { attempt: 'asc' } });
    expect(logged.map((a) => [a.attempt, a.endpointId])).toEqual([
      [2, 'we_schema'],
      [3, 'we_schema'],
      [4, 'we_schema'],
    ]);
    await expect(prisma.$executeRaw`INSERT INTO webhook_delivery_attempts (delivery_id, attempt, duration_ms) VALUES ('dlv_none', 1, 5)`).rejects.toThrow(
      /webhook delivery dlv_none does not exist/,
    );
    await expect(prisma.webhookDeliveryAttempt.count({ where: { deliveryId: 'dlv_none' } })).resolves.toBe(0);
  });

  test('when a statement says it wrote a decision in part, then decision_written_whole fails it as a serialization failure, taking back its writes', async () => {
    const [whole] = await prisma.$queryRaw<{ whole: boolean }[]>`SELECT decision_written_whole(true) AS whole`;
    const refused: unknown = await prisma.$executeRaw`
      WITH written AS (INSERT INTO organisations (id, name, owner_email) VALUES ('org_partial', 'n', 'o@example.com') RETURNING 1)
      SELECT decision_written_whole(NOT EXISTS (SELECT FROM written))`.catch((error: unknown) => error);

    expect(whole).toEqual({ whole: true });
    expect(String(refused)).toMatch(/the decision was written in part/);
    expect(JSON.stringify(refused)).toContain('40001');
    expect(await prisma.organisation.count({ where: { id: 'org_partial' } })).toBe(0);
  });

  test('when migrated, then the two queue tables are vacuumed after a fixed number of dead rows, not a fifth of the table', async () => {
    const rows = await prisma.$queryRaw<{ relname: string; reloptions: string[] | null }[]>`
      SELECT relname, reloptions FROM pg_class WHERE relname IN ('outbox', 'webhook_deliveries') AND relkind = 'r' ORDER BY relname`;
    const queueVacuum = ['autovacuum_vacuum_scale_factor=0', 'autovacuum_vacuum_threshold=5000'];
    expect(rows).toEqual([
      { relname: 'outbox', reloptions: expect.arrayContaining(queueVacuum) },
      { relname: 'webhook_deliveries', reloptions: expect.arrayContaining(queueVacuum) },
    ]);
  });

  test('when migrated, then ANALYZE skips the payload columns and the identifiers unique on their own, and only those', async () => {
    const rows = await prisma.$queryRaw<{ column: string }[]>`
      SELECT c.relname || '.' || a.attname AS column FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 AND a.attstattarget = 0 ORDER BY 1`;
    expect(rows.map((r) => r.column)).toEqual([
      'audit_log.detail',
      'events.data',
      'events.id',
      'idempotency_keys.response_body',
      'orders.id',
      'orders.metadata',
      'orders.payment',
      'orders.payment_token',
      'outbox.headers',
      'outbox.message_id',
      'outbox.payload',
      'payment_links.metadata',
      'transactions.decision',
      'transactions.id',
    ]);
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

  test("when a migration was edited in its comments alone, then the file is taken, its record keeps the first checksum, and an earlier release's runner still finds it applied", async () => {
    const { url, dir, file, first, now, versions } = editedMigration();
    await ensureDatabase(url);
    try {
      writeFileSync(file, first);
      await migrate(url, dir, {}); // the earlier release
      writeFileSync(file, now);
      expect(await migrate(url, dir, versions)).toEqual({ applied: [], alreadyApplied: ['001_first'] });
      expect(await recordedChecksums(url)).toEqual({ '001_first': sha256(first) });

      writeFileSync(file, first); // rolled back: the earlier release's runner and file
      expect(await migrate(url, dir, {})).toEqual({ applied: [], alreadyApplied: ['001_first'] });

      writeFileSync(file, '-- An earlier note.\nCREATE TABLE t (id bigint);');
      await expect(migrate(url, dir, versions)).rejects.toThrow(/001_first was changed/);
    } finally {
      await dropDatabase(url);
    }
  });

  test('when an edited migration is applied to a new database, or was recorded with its edited text, then its record is the first checksum', async () => {
    const { url, dir, file, first, now, versions } = editedMigration();
    writeFileSync(file, now);
    await ensureDatabase(url);
    try {
      expect(await migrate(url, dir, versions)).toEqual({ applied: ['001_first'], alreadyApplied: [] });
      expect(await recordedChecksums(url)).toEqual({ '001_first': sha256(first) });

      const client = new Client({ connectionString: url });
      await client.connect();
      await client.query('UPDATE "_prisma_migrations" SET checksum = $1', [sha256(now)]);
      await client.end();
      expect(await migrate(url, dir, versions)).toEqual({ applied: [], alreadyApplied: ['001_first'] });
      expect(await recordedChecksums(url)).toEqual({ '001_first': sha256(first) });
    } finally {
      await dropDatabase(url);
    }
  });

  test("when a database recorded the repository's edited migrations with either text, then it migrates and records each with its first checksum", async () => {
    const url = databaseUrl(uniqueName('pmatch_m_'));
    await ensureDatabase(url);
    try {
      await migrate(url);
      const all = readdirSync(MIGRATIONS_DIR).sort();
      const edited = Object.keys(EDITED_MIGRATION_CHECKSUMS);
      const firsts = Object.fromEntries(Object.entries(EDITED_MIGRATION_CHECKSUMS).map(([name, [first]]) => [name, first]));
      expect(Object.fromEntries(Object.entries(await recordedChecksums(url)).filter(([name]) => edited.includes(name)))).toEqual(firsts);

      const client = new Client({ connectionString: url });
      await client.connect();
      for (const name of edited) {
        const file = readFileSync(join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8');
        await client.query('UPDATE "_prisma_migrations" SET checksum = $1 WHERE migration_name = $2', [sha256(file), name]);
      }
      await client.end();
      expect(await migrate(url)).toEqual({ applied: [], alreadyApplied: all });
      expect(Object.fromEntries(Object.entries(await recordedChecksums(url)).filter(([name]) => edited.includes(name)))).toEqual(firsts);
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

  test("when an order stored before the account scope keys is not of its account's organisation, then their check fails and keeps the old keys; once it is gone, the keys are valid and replace the old", async () => {
    const url = databaseUrl(uniqueName('pmatch_m_'));
    const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
    const before = readdirSync(MIGRATIONS_DIR).filter((name) => name < '20261124060000_account_scope_keys');
    for (const name of before) cpSync(join(MIGRATIONS_DIR, name), join(dir, name), { recursive: true });
    await ensureDatabase(url);
    const client = new Client({ connectionString: url });
    const keys = async () =>
      (
        await client.query<{ conname: string; convalidated: boolean }>(
          `SELECT conname, convalidated FROM pg_constraint WHERE contype = 'f' AND conrelid IN ('orders'::regclass, 'transactions'::regclass) AND conname NOT IN ('transactions_order_id_fkey', 'transactions_statement_import_id_fkey', 'orders_payment_link_fkey') ORDER BY conname`,
        )
      ).rows;
    try {
      await migrate(url, dir);
      await client.connect();
      await client.query(`INSERT INTO organisations (id, name, owner_email) VALUES ('org_a', 'a', 'a@example.com'), ('org_b', 'b', 'b@example.com')`);
      await client.query(
        `INSERT INTO bank_accounts (id, organisation_id, mode, bank_code, branch_code, account_number, holder_name) VALUES ('ba_a', 'org_a', 'live', '0001', '001', '1234567', 'h')`,
      );
      await client.query(
        `INSERT INTO orders (id, organisation_id, mode, bank_account_id, status, amount, payer_name, external_id, item_name, ordered_at, expires_at, payment_token)
         VALUES ('ord_of_b_on_a', 'org_b', 'live', 'ba_a', 'open', 1, 'p', 'e', 'i', now(), now(), 't')`,
      );
      cpSync(MIGRATIONS_DIR, dir, { recursive: true });

      await expect(migrate(url, dir)).rejects.toThrow(/20261124060100_account_scope_keys_validated failed/);
      expect(await keys()).toEqual([
        { conname: 'orders_bank_account_id_fkey', convalidated: true },
        { conname: 'orders_bank_account_scope_fkey', convalidated: false },
        { conname: 'orders_organisation_id_fkey', convalidated: true },
        { conname: 'transactions_bank_account_id_fkey', convalidated: true },
        { conname: 'transactions_bank_account_scope_fkey', convalidated: false },
        { conname: 'transactions_organisation_id_fkey', convalidated: true },
      ]);

      await client.query(`DELETE FROM orders WHERE id = 'ord_of_b_on_a'`);
      expect((await migrate(url, dir)).applied).toContain('20261124060100_account_scope_keys_validated');
      expect(await keys()).toEqual([
        { conname: 'orders_bank_account_scope_fkey', convalidated: true },
        { conname: 'transactions_bank_account_scope_fkey', convalidated: true },
      ]);
    } finally {
      await client.end().catch(() => undefined);
      await dropDatabase(url);
    }
  });
});

/** A migrations folder of one migration, `001_first`, whose texts `first` and `now` differ in a comment alone. */
function editedMigration() {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  mkdirSync(join(dir, '001_first'));
  const first = '-- An earlier note.\nCREATE TABLE t (id int);';
  const now = '-- The note as it reads now.\nCREATE TABLE t (id int);';
  return {
    url: databaseUrl(uniqueName('pmatch_m_')),
    dir,
    file: join(dir, '001_first', 'migration.sql'),
    first,
    now,
    versions: { '001_first': [sha256(first), sha256(now)] },
  };
}

async function dropDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const admin = new Client({ connectionString: databaseUrl('postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
}

describe('least privilege', () => {
  let db: TestDatabase;
  const TABLES = [
    'organisations',
    'bank_accounts',
    'api_keys',
    'settings',
    'bank_adapters',
    'orders',
    'transactions',
    'events',
    'outbox',
    'inbox',
    'idempotency_keys',
    'webhook_endpoints',
    'webhook_deliveries',
    'webhook_delivery_attempts',
    'webhook_emails',
    'bank_adapter_accounts',
    'statement_imports',
    'statement_records',
    'users',
    'console_sessions',
    'audit_log',
    'payment_links',
    'user_recovery_codes',
    'console_displays',
  ];
  /** What each service's data code reads; every other table is refused. */
  const READS: Record<string, string[]> = {
    pmatch_orders_api: [
      'bank_accounts',
      'api_keys',
      'settings',
      'orders',
      'transactions',
      'events',
      'outbox',
      'idempotency_keys',
      'webhook_endpoints',
      'webhook_deliveries',
      'webhook_delivery_attempts',
      'users',
      'console_sessions',
      'audit_log',
      'payment_links',
      'user_recovery_codes',
      'console_displays',
    ],
    pmatch_bank_ingest: ['bank_accounts', 'bank_adapters', 'bank_adapter_accounts', 'transactions', 'outbox', 'statement_imports'],
    pmatch_matcher: ['settings', 'orders', 'transactions', 'outbox', 'inbox'],
    pmatch_webhook_dispatcher: ['organisations', 'events', 'inbox', 'webhook_endpoints', 'webhook_deliveries', 'webhook_delivery_attempts', 'webhook_emails'],
    pmatch_ops: [
      'organisations',
      'bank_accounts',
      'api_keys',
      'settings',
      'bank_adapters',
      'bank_adapter_accounts',
      'orders',
      'transactions',
      'statement_imports',
      'users',
      'console_sessions',
      'user_recovery_codes',
    ],
  };
  const order = (id: string, status: string, extra = '') =>
    `INSERT INTO orders (id, organisation_id, mode, bank_account_id, status, amount, payer_name, external_id, item_name, ordered_at, expires_at, payment_token${extra === '' ? '' : ', closed_at, payment'})
     VALUES ('${id}', 'org_p', 'test', 'ba_p', '${status}', 100, 'p', '${id}', 'i', now(), now() + interval '1 day', '${id}'${extra})`;

  beforeAll(async () => {
    db = await createTestDatabase();
    const admin = new Client({ connectionString: db.url });
    await admin.connect();
    await admin.query(`INSERT INTO organisations (id, name, owner_email) VALUES ('org_p', 'n', 'o@example.com')`);
    await admin.query(`INSERT INTO bank_accounts (id, organisation_id, mode, bank_code, branch_code, account_number, holder_name)
                       VALUES ('ba_p', 'org_p', 'test', '9999', '001', '1234567', 'h')`);
    await admin.query(order('ord_p', 'open'));
    await admin.query(order('ord_open', 'open'));
    await admin.query(order('ord_expired', 'expired', `, '2026-11-22T00:00:00Z', NULL`));
    await admin.query(order('ord_expired2', 'expired', `, '2026-11-22T00:00:00Z', NULL`));
    await admin.query(order('ord_paid', 'paid', `, now(), '{"reason": "exact"}'`));
    await admin.query(`${order('ord_shop', 'open')}; UPDATE orders SET source = 'shop' WHERE id = 'ord_shop'`);
    await admin.query(`INSERT INTO payment_links (id, organisation_id, mode, bank_account_id, amount, item_name, token, created_at, updated_at)
                       VALUES ('plink_p', 'org_p', 'test', 'ba_p', 100, 'i', 'plink_p', now(), now())`);
    await admin.query(`INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at)
                       VALUES ('txn_p', 'org_p', 'test', 'ba_p', 'r', 'deposit', 'pending', 100, 'p', now())`);
    await admin.query(`INSERT INTO events (id, organisation_id, mode, type, data) VALUES ('evt_delivered', 'org_p', 'test', 'order.paid', '{}'),
                       ('evt_free', 'org_p', 'test', 'order.paid', '{}')`);
    await admin.query(
      `INSERT INTO webhook_endpoints (id, organisation_id, mode, url, secret_encrypted) VALUES ('we_p', 'org_p', 'test', 'https://example.com/h', 's')`,
    );
    await admin.query(`INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status) VALUES ('dlv_p', 'we_p', 'evt_delivered', 'succeeded')`);
    await admin.query(`INSERT INTO webhook_delivery_attempts (delivery_id, attempt, duration_ms) VALUES ('dlv_p', 1, 5)`);
    await admin.query(`INSERT INTO inbox (consumer, message_id) VALUES ('c', 'm')`);
    await admin.end();
  });
  afterAll(async () => {
    await db?.drop();
  });

  async function as<T = Record<string, unknown>>(role: string, sql: string): Promise<T[]> {
    const url = new URL(db.url);
    url.username = role;
    const client = new Client({ connectionString: url.toString() });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  }
  const orderRow = async (id: string) =>
    (await as<{ status: string; closed_at: Date | null; amount: string }>('postgres', `SELECT status, closed_at, amount FROM orders WHERE id = '${id}'`))[0];

  test.each([
    ['pmatch_orders_api', `UPDATE transactions SET status = 'unmatched' WHERE id = 'txn_p'`],
    // Keys issued on the console are new rows; an existing key's hash, scope or permission never changes.
    ['pmatch_orders_api', `UPDATE api_keys SET key_hash = 'x'`],
    ['pmatch_orders_api', `UPDATE api_keys SET permission = 'read_write'`],
    // The console adds only an organisation's test account; live accounts are the operator's.
    [
      'pmatch_orders_api',
      `INSERT INTO bank_accounts (id, organisation_id, mode, bank_code, branch_code, account_number, holder_name) VALUES ('ba_live_x', 'org_p', 'live', '0001', '001', '7654321', 'h')`,
    ],
    // A live dedicated account only of the organisation insertLiveBankAccounts names in the transaction.
    [
      'pmatch_orders_api',
      `INSERT INTO bank_accounts (id, organisation_id, mode, bank_code, branch_code, account_number, holder_name, dedicated) VALUES ('ba_live_d', 'org_p', 'live', '0001', '001', '7654322', 'h', true)`,
    ],
    [
      'pmatch_orders_api',
      `BEGIN; SELECT set_config('pmatch.adding_accounts_of', 'org_other', true);
       INSERT INTO bank_accounts (id, organisation_id, mode, bank_code, branch_code, account_number, holder_name, dedicated) VALUES ('ba_live_d', 'org_p', 'live', '0001', '001', '7654322', 'h', true); COMMIT`,
    ],
    // A pool row only for a dedicated account.
    ['pmatch_orders_api', `INSERT INTO dedicated_accounts (bank_account_id, organisation_id, mode) VALUES ('ba_p', 'org_p', 'test')`],
    // The audit log is appended to only.
    ['pmatch_orders_api', `UPDATE audit_log SET action = 'x'`],
    ['pmatch_orders_api', `DELETE FROM audit_log`],
    ['pmatch_orders_api', `SELECT owner_email FROM organisations`],
    // Paying is the matcher's: the payment column is not orders-api's, nor are the transitions to paid, expired or back to open.
    ['pmatch_orders_api', `UPDATE orders SET status = 'paid', payment = '{"reason": "exact"}', closed_at = now() WHERE id = 'ord_open'`],
    ['pmatch_orders_api', `UPDATE orders SET status = 'paid_outside' WHERE id = 'ord_paid'`],
    ['pmatch_orders_api', `UPDATE orders SET status = 'expired', closed_at = now() WHERE id = 'ord_open'`],
    ['pmatch_orders_api', `UPDATE orders SET status = 'open', closed_at = NULL WHERE id = 'ord_expired'`],
    ['pmatch_orders_api', `UPDATE orders SET payer_name = 'q' WHERE id = 'ord_paid'`],
    ['pmatch_orders_api', `UPDATE orders SET status = 'canceled' WHERE id = 'ord_paid'`],
    ['pmatch_orders_api', `UPDATE orders SET status = 'canceled', closed_at = now() WHERE id = 'ord_expired'`],
    ['pmatch_orders_api', `UPDATE orders SET amount = 5 WHERE id = 'ord_shop'`],
    ['pmatch_orders_api', `UPDATE orders SET source = NULL WHERE id = 'ord_shop'`],
    ['pmatch_orders_api', order('ord_new_paid', 'paid', `, now(), '{"reason": "exact"}'`)],
    [
      'pmatch_orders_api',
      `${order('ord_new_shop', 'open').replace('payment_token)', 'payment_token, source)').replace(`'ord_new_shop')`, `'ord_new_shop', 'shop')`)}`,
    ],
    // A payment link's terms never change once it is made; only its count and its deactivation do.
    ['pmatch_orders_api', `UPDATE payment_links SET amount = 1 WHERE id = 'plink_p'`],
    ['pmatch_orders_api', `DELETE FROM payment_links`],
    ['pmatch_matcher', `UPDATE payment_links SET use_count = 0`],
    // The delivery log is the dispatcher's.
    ['pmatch_orders_api', `DELETE FROM inbox`],
    ['pmatch_orders_api', `DELETE FROM webhook_deliveries`],
    ['pmatch_orders_api', `DELETE FROM webhook_delivery_attempts`],
    // orders-api queues the console's e-mails and never reads, changes or deletes the queue.
    ['pmatch_orders_api', `UPDATE webhook_emails SET recipient = 'x@example.com'`],
    ['pmatch_orders_api', `DELETE FROM webhook_emails`],
    ['pmatch_bank_ingest', `DELETE FROM inbox`],
    ['pmatch_bank_ingest', `UPDATE orders SET status = 'canceled', closed_at = now() WHERE id = 'ord_p'`],
    ['pmatch_bank_ingest', `UPDATE transactions SET amount = 1 WHERE id = 'txn_p'`],
    [
      'pmatch_matcher',
      `INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at)
                        VALUES ('txn_x', 'org_p', 'test', 'ba_p', 'x', 'deposit', 'pending', 100, 'p', now())`,
    ],
    ['pmatch_matcher', `DELETE FROM events`],
    ['pmatch_webhook_dispatcher', `UPDATE orders SET amount = 1 WHERE id = 'ord_p'`],
    // The dispatcher switches an endpoint off; where it delivers and how it signs are the merchant's.
    ['pmatch_webhook_dispatcher', `UPDATE webhook_endpoints SET url = 'https://attacker.example/h' WHERE id = 'we_p'`],
    ['pmatch_webhook_dispatcher', `UPDATE webhook_endpoints SET secret_encrypted = 'x' WHERE id = 'we_p'`],
    ['pmatch_webhook_dispatcher', `UPDATE webhook_endpoints SET previous_secret_encrypted = 'x' WHERE id = 'we_p'`],
    ['pmatch_ops', `UPDATE transactions SET status = 'unmatched' WHERE id = 'txn_p'`],
    ['pmatch_bank_ingest', `UPDATE bank_adapters SET revoked_at = NULL`],
    ['pmatch_bank_ingest', `INSERT INTO bank_adapter_accounts (adapter_id, bank_account_id) VALUES ('adp_x', 'ba_p')`],
  ])('when %s tries a write its service does not own, then the database refuses it', async (role, sql) => {
    const before = await as('postgres', 'SELECT id, status, amount, payer_name, closed_at, payment, source FROM orders ORDER BY id');

    await expect(as(role, sql)).rejects.toThrow(/permission denied/);

    expect(await as('postgres', 'SELECT id, status, amount, payer_name, closed_at, payment, source FROM orders ORDER BY id')).toEqual(before);
  });

  const cells = Object.entries(READS).flatMap(([role, tables]) => TABLES.map((table) => [role, table, tables.includes(table)] as const));
  test.each(cells.filter(([, , allowed]) => !allowed))(
    'when %s reads %s, which its service does not need, then the database refuses it',
    async (role, table) => {
      await expect(as(role, `SELECT * FROM ${table} LIMIT 1`)).rejects.toThrow(/permission denied/);
    },
  );
  test.each(cells.filter(([, , allowed]) => allowed))('when %s reads %s, which its service needs, then it may', async (role, table) => {
    await expect(as(role, `SELECT * FROM ${table} LIMIT 1`)).resolves.toBeDefined();
  });

  test('when orders-api adds a live dedicated account of the organisation it names in the transaction, then the database allows it', async () => {
    await as(
      'pmatch_orders_api',
      `BEGIN; SELECT set_config('pmatch.adding_accounts_of', 'org_p', true);
       INSERT INTO bank_accounts (id, organisation_id, mode, bank_code, branch_code, account_number, holder_name, dedicated) VALUES ('ba_live_ok', 'org_p', 'live', '0001', '001', '7654323', 'h', true);
       INSERT INTO dedicated_accounts (bank_account_id, organisation_id, mode) VALUES ('ba_live_ok', 'org_p', 'live'); COMMIT`,
    );

    expect(await as('postgres', `SELECT organisation_id, mode FROM dedicated_accounts WHERE bank_account_id = 'ba_live_ok'`)).toEqual([
      { organisation_id: 'org_p', mode: 'live' },
    ]);
  });

  test('when orders-api deletes an event that still has deliveries, then it fails and the delivery log stays: nothing cascades', async () => {
    await expect(as('pmatch_orders_api', `DELETE FROM events WHERE id = 'evt_delivered'`)).rejects.toThrow(/foreign key/);

    expect(await as('postgres', `SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE delivery_id = 'dlv_p'`)).toEqual([{ n: 1 }]);
  });

  test('when orders-api creates, changes and cancels open orders and cancels an expired one, then the database allows it', async () => {
    await as('pmatch_orders_api', order('ord_api', 'open'));
    await as('pmatch_orders_api', `UPDATE orders SET amount = 200, payer_name = 'q', metadata = '{"a": "b"}', updated_at = now() WHERE id = 'ord_open'`);
    await as('pmatch_orders_api', `UPDATE orders SET status = 'canceled', closed_at = COALESCE(closed_at, now()) WHERE id IN ('ord_api', 'ord_expired2')`);

    expect(await orderRow('ord_open')).toMatchObject({ status: 'open', amount: '200' });
    expect(await orderRow('ord_api')).toMatchObject({ status: 'canceled', closed_at: expect.any(Date) });
    expect(await orderRow('ord_expired2')).toEqual({ status: 'canceled', closed_at: new Date('2026-11-22T00:00:00Z'), amount: '100' });
  });

  test('when orders-api makes a payment link, an order at it, raises its count and deactivates it, then the database allows it, and the order is changed and canceled as its own', async () => {
    await as(
      'pmatch_orders_api',
      `INSERT INTO payment_links (id, organisation_id, mode, bank_account_id, amount, item_name, use_limit, token, created_at, updated_at)
                                   VALUES ('plink_api', 'org_p', 'test', 'ba_p', 100, 'i', 2, 'plink_api', now(), now())`,
    );
    await as('pmatch_orders_api', `UPDATE payment_links SET use_count = use_count + 1, updated_at = now() WHERE id = 'plink_api'`);
    await as(
      'pmatch_orders_api',
      order('ord_link', 'open')
        .replace('payment_token)', 'payment_token, source, payment_link_id)')
        .replace(`'ord_link')`, `'ord_link', 'payment_link', 'plink_api')`),
    );
    await as('pmatch_orders_api', `UPDATE orders SET payer_name = 'q' WHERE id = 'ord_link'`);
    await as('pmatch_orders_api', `UPDATE orders SET status = 'canceled', closed_at = now() WHERE id = 'ord_link'`);
    await as('pmatch_orders_api', `UPDATE payment_links SET deactivated_at = now(), updated_at = now() WHERE id = 'plink_api'`);

    expect(await orderRow('ord_link')).toMatchObject({ status: 'canceled' });
    expect(await as('postgres', `SELECT use_count, deactivated_at IS NOT NULL AS deactivated FROM payment_links WHERE id = 'plink_api'`)).toEqual([
      { use_count: 1, deactivated: true },
    ]);
  });

  test('when each service does the other writes it owns, then the database allows them', async () => {
    await as('pmatch_orders_api', `DELETE FROM events WHERE id = 'evt_free'`);
    await as('pmatch_orders_api', `DELETE FROM idempotency_keys`);
    await as(
      'pmatch_bank_ingest',
      `INSERT INTO transactions (id, organisation_id, mode, bank_account_id, bank_reference, direction, status, amount, counterparty, occurred_at)
                                    VALUES ('txn_b', 'org_p', 'test', 'ba_p', 'b', 'deposit', 'pending', 100, 'p', now())`,
    );
    await as('pmatch_matcher', `UPDATE transactions SET status = 'unmatched' WHERE id = 'txn_p'`);
    await as('pmatch_matcher', `UPDATE orders SET status = 'paid', payment = '{"reason": "exact"}', closed_at = now() WHERE id = 'ord_p'`);
    await as(
      'pmatch_matcher',
      `INSERT INTO inbox (consumer, message_id, processed_at) VALUES ('matcher.x', 'm', now()) ON CONFLICT (consumer, message_id) DO NOTHING`,
    );
    await as('pmatch_matcher', `SELECT decision_written_whole(true)`);
    // Each consumer forgets its own processed messages after 30 days (platform forgetProcessedMessages).
    await as('pmatch_matcher', `DELETE FROM inbox WHERE consumer = 'matcher.x'`);
    await as('pmatch_webhook_dispatcher', `DELETE FROM inbox WHERE consumer = 'webhook-dispatcher.x'`);
    await as(
      'pmatch_webhook_dispatcher',
      `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing', failing_since = now(), last_failure_email_at = now() WHERE id = 'we_p'`,
    );
    await as('pmatch_webhook_dispatcher', `DELETE FROM webhook_deliveries WHERE id = 'dlv_p'`);
    await as('pmatch_ops', `UPDATE organisations SET name = 'm' WHERE id = 'org_p'`);
    await as(
      'pmatch_orders_api',
      `INSERT INTO webhook_emails (id, kind, recipient, subject, body, next_attempt_at) VALUES ('eml_p', 'console_password_reset', 'u@example.com', 's', 'b', now())`,
    );

    expect(await orderRow('ord_p')).toMatchObject({ status: 'paid' });
    expect(await as('postgres', `SELECT count(*)::int AS n FROM webhook_delivery_attempts`)).toEqual([{ n: 0 }]);
    // With its deliveries gone, the event may go too.
    await as('pmatch_orders_api', `DELETE FROM events WHERE id = 'evt_delivered'`);
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
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
        new URL(db.url).pathname.slice(1),
      ]);
      await admin.end();
      await waitFor(() => (lost.length > 0 ? true : undefined), { what: 'the pool to report the lost connections' });

      await expect(client.organisation.count()).resolves.toBe(0);
    } finally {
      await client.$disconnect();
      await db.drop();
    }
  });
});

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

async function recordedChecksums(url: string): Promise<Record<string, string>> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const rows = await client.query<{ migration_name: string; checksum: string }>('SELECT migration_name, checksum FROM "_prisma_migrations"');
    return Object.fromEntries(rows.rows.map((r) => [r.migration_name, r.checksum]));
  } finally {
    await client.end();
  }
}
