import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TEST_DEDICATED_POOL, type PrismaClient } from '@pmatch/db';
import { SecretBox, sha256Hex } from '@pmatch/platform';
import { usePrismaTestDatabase, type TestDatabase } from '@pmatch/testkit';
import * as commands from '../src/commands';
import { TEST_SECRETS_KEY, expectFailure, runOps, runOpsOk } from './run-ops';

let db: TestDatabase;
let prisma: PrismaClient;

usePrismaTestDatabase({ poolSize: 2 }, (opened) => ({ db, prisma } = opened));

/** Runs the built CLI and asserts it succeeded with exactly one JSON object on stdout. */
const ops = (...args: string[]) => runOpsOk(db.url, args);

/** `bank-account add` for the organisation, with these flags (by name, without `--`) in place of a valid live account's. */
function bankAccountAdd(organisationId: string, flags: Record<string, string> = {}): string[] {
  const all = { mode: 'live', 'bank-code': '0001', 'branch-code': '001', 'account-number': '1234567', 'holder-name': 'X', ...flags };
  return ['bank-account', 'add', '--org', organisationId, ...Object.entries(all).flatMap(([flag, value]) => [`--${flag}`, value])];
}

// Arrange steps call the command functions directly: the CLI run is what each test acts on.
async function createOrganisation(name = 'アクメ株式会社'): Promise<string> {
  return (await commands.createOrganisation(prisma, { name, ownerEmail: 'owner@example.com' })).id;
}

async function addLiveBankAccount(organisationId: string, accountNumber: string): Promise<string> {
  const account = await commands.addLiveBankAccount(prisma, {
    organisationId,
    bankCode: '0009',
    branchCode: '100',
    accountType: 'ordinary',
    accountNumber,
    holderName: 'ｱｸﾒ(ｶ',
  });
  return account.id;
}

async function issueKey(organisationId: string, mode: 'test' | 'live'): Promise<string> {
  return (await commands.issueApiKey(prisma, { organisationId, mode, name: 'k', permission: 'read_write' })).id;
}

/** Row counts of every table the CLI writes. */
async function writtenRows() {
  const [organisations, apiKeys, bankAccounts, settings, bankAdapters, bindings] = await Promise.all([
    prisma.organisation.count(),
    prisma.apiKey.count(),
    prisma.bankAccount.count(),
    prisma.setting.count(),
    prisma.bankAdapter.count(),
    prisma.bankAdapterAccount.count(),
  ]);
  return { organisations, apiKeys, bankAccounts, settings, bankAdapters, bindings };
}

describe('org create', () => {
  test('when an organisation is created, then it is printed and stored with default settings in both modes', async () => {
    const organisation = await ops('org', 'create', '--name', '  アクメ株式会社 ', '--owner-email', 'owner@example.com');

    expect(organisation).toEqual({
      id: expect.stringMatching(/^org_[0-9A-Za-z]{24}$/),
      object: 'organisation',
      name: 'アクメ株式会社',
      owner_email: 'owner@example.com',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const row = await prisma.organisation.findUniqueOrThrow({ where: { id: String(organisation.id) } });
    expect(row).toMatchObject({ name: 'アクメ株式会社', ownerEmail: 'owner@example.com' });
    const settings = await prisma.setting.findMany({ where: { organisationId: row.id }, orderBy: { mode: 'asc' } });
    expect(settings).toEqual([
      expect.objectContaining({ mode: 'live', autoConfirmLateOrders: false, matchingRules: [] }),
      expect.objectContaining({ mode: 'test', autoConfirmLateOrders: false, matchingRules: [] }),
    ]);
  });
});

describe('key issue', () => {
  test('when a key is issued, then its text is printed once and the database holds only its hash and a hint', async () => {
    const organisationId = await createOrganisation();

    const issued = await ops('key', 'issue', '--org', organisationId, '--mode', 'test', '--name', 'shop server');

    expect(issued).toEqual({
      id: expect.stringMatching(/^key_/),
      object: 'api_key',
      key: expect.stringMatching(/^svc_test_[0-9A-Za-z]{32}$/),
      name: 'shop server',
      mode: 'test',
      permission: 'read_write',
      bank_account_id: null,
      organisation_id: organisationId,
      created_at: expect.any(String),
    });
    const keyText = String(issued.key);
    const row = await prisma.apiKey.findUniqueOrThrow({ where: { id: String(issued.id) } });
    expect(row.keyHash).toBe(sha256Hex(keyText));
    expect(row.keyHint).toBe(`svc_test_...${keyText.slice(-4)}`);
    expect(row.revokedAt).toBeNull();
    const storedText = Object.values(row).map(String).join(' ');
    expect(storedText).not.toContain(keyText);
    expect(storedText).not.toContain(keyText.slice('svc_test_'.length));
  });

  test('when the first test key is issued, then it creates the one test bank account and its pool of dedicated ones, and a second test key creates none', async () => {
    const organisationId = await createOrganisation('テスト商店');

    await ops('key', 'issue', '--org', organisationId, '--mode', 'test', '--name', 'first');
    const afterFirst = await prisma.bankAccount.findMany({ where: { organisationId }, orderBy: { accountNumber: 'asc' } });
    await ops('key', 'issue', '--org', organisationId, '--mode', 'test', '--name', 'second', '--permission', 'read_only');
    const afterSecond = await prisma.bankAccount.findMany({ where: { organisationId }, orderBy: { accountNumber: 'asc' } });

    const [plain, ...pool] = afterFirst;
    expect(pool).toHaveLength(TEST_DEDICATED_POOL);
    expect(pool.every((account) => account.dedicated && account.mode === 'test' && account.holderName === 'テスト商店')).toBe(true);
    expect(await prisma.dedicatedAccount.count({ where: { organisationId, mode: 'test' } })).toBe(TEST_DEDICATED_POOL);
    expect([plain]).toEqual([
      expect.objectContaining({
        mode: 'test',
        bankCode: '9999',
        bankName: 'テスト銀行',
        branchCode: '001',
        branchName: 'テスト支店',
        accountNumber: expect.stringMatching(/^[0-9]{7}$/),
        holderName: 'テスト商店',
        dedicated: false,
      }),
    ]);
    expect(afterSecond).toEqual(afterFirst);
  });

  test('when a live key is issued, then no test bank account is created', async () => {
    const organisationId = await createOrganisation();

    const issued = await ops('key', 'issue', '--org', organisationId, '--mode', 'live', '--name', 'live server');

    expect(issued).toMatchObject({ key: expect.stringMatching(/^svc_live_[0-9A-Za-z]{32}$/), mode: 'live', bank_account_id: null });
    expect(await prisma.bankAccount.count({ where: { organisationId } })).toBe(0);
  });

  test('when a live key is scoped to a live account of its organisation, then the key carries that account', async () => {
    const organisationId = await createOrganisation();
    const accountId = await addLiveBankAccount(organisationId, '7654321');

    const issued = await ops(
      'key',
      'issue',
      '--org',
      organisationId,
      '--mode',
      'live',
      '--name',
      'one account',
      '--permission',
      'read_only',
      '--bank-account',
      accountId,
    );

    expect(issued).toMatchObject({ mode: 'live', permission: 'read_only', bank_account_id: accountId });
    const row = await prisma.apiKey.findUniqueOrThrow({ where: { id: String(issued.id) } });
    expect(row).toMatchObject({ bankAccountId: accountId, permission: 'read_only', mode: 'live' });
  });
});

describe('key revoke', () => {
  test('when a key is revoked, then revoked_at is set, and revoking it again keeps the first time', async () => {
    const organisationId = await createOrganisation();
    const keyId = await issueKey(organisationId, 'test');

    const revoked = await ops('key', 'revoke', '--key', keyId);
    const revokedAgain = await ops('key', 'revoke', '--key', keyId);

    expect(revoked).toEqual({ id: keyId, revoked_at: expect.any(String) });
    const row = await prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } });
    expect(row.revokedAt?.toISOString()).toBe(revoked.revoked_at);
    expect(revokedAgain).toEqual(revoked);
  });
});

describe('bank-account add', () => {
  test('when a live account is added, then it is stored in full but printed with only the last 4 digits', async () => {
    const organisationId = await createOrganisation();

    const account = await ops(...bankAccountAdd(organisationId, { 'holder-name': 'ｱｸﾒ(ｶ', 'bank-name': 'みずほ銀行', 'branch-name': '本店' }));

    expect(account).toEqual({
      id: expect.stringMatching(/^ba_/),
      object: 'bank_account',
      livemode: true,
      bank_code: '0001',
      bank_name: 'みずほ銀行',
      branch_code: '001',
      branch_name: '本店',
      account_number_last4: '4567',
      holder_name: 'ｱｸﾒ(ｶ',
      dedicated: false,
      created_at: expect.any(String),
      organisation_id: organisationId,
    });
    expect(JSON.stringify(account)).not.toContain('1234567');
    const row = await prisma.bankAccount.findUniqueOrThrow({ where: { id: String(account.id) } });
    expect(row).toMatchObject({ organisationId, mode: 'live', accountNumber: '1234567' });
  });

  test('when dedicated accounts are added with --count, then that many consecutive numbers become free dedicated accounts of the organisation', async () => {
    const organisationId = await createOrganisation();

    const added = await ops(...bankAccountAdd(organisationId, { 'account-number': '0009998', 'holder-name': 'ｶ)ｱｸﾒ', count: '3' }), '--dedicated');

    const rows = await prisma.bankAccount.findMany({ where: { organisationId }, orderBy: { accountNumber: 'asc' } });
    expect(rows.map((row) => [row.accountNumber, row.dedicated, row.holderName])).toEqual([
      ['0009998', true, 'ｶ)ｱｸﾒ'],
      ['0009999', true, 'ｶ)ｱｸﾒ'],
      ['0010000', true, 'ｶ)ｱｸﾒ'],
    ]);
    expect(added).toMatchObject({
      object: 'list',
      data: rows.map((row) => ({ id: row.id, dedicated: true, account_number_last4: row.accountNumber.slice(-4) })),
    });
    const pool = await prisma.dedicatedAccount.findMany({ where: { organisationId } });
    expect(pool.map((d) => [d.bankAccountId, d.mode, d.orderId, d.customerReference]).sort()).toEqual(rows.map((row) => [row.id, 'live', null, null]).sort());
  });

  test('when dedicated accounts are added from a numbers file, then each number becomes one; a number the organisation has makes the whole file fail', async () => {
    const organisationId = await createOrganisation();
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'numbers-')), 'numbers.txt');
    writeFileSync(file, '7000001\n7000005\n\n7000009\n');
    const args = (...more: string[]) => {
      const flags = bankAccountAdd(organisationId, { 'holder-name': 'ｶ)ｱｸﾒ' });
      const at = flags.indexOf('--account-number');
      return [...flags.slice(0, at), ...flags.slice(at + 2), '--dedicated', '--numbers-file', file, ...more];
    };

    await ops(...args());
    const again = await runOps(db.url, args());

    const rows = await prisma.bankAccount.findMany({ where: { organisationId }, orderBy: { accountNumber: 'asc' } });
    expect(rows.map((row) => row.accountNumber)).toEqual(['7000001', '7000005', '7000009']);
    expect(again.exitCode).toBe(4);
    expect(await prisma.dedicatedAccount.count({ where: { organisationId } })).toBe(3);
  });
});

describe('bank adapters', () => {
  test('when an adapter is created for accounts, then its secret is stored sealed and opens to the printed secret, and it is bound to those accounts', async () => {
    const organisationId = await createOrganisation();
    const accounts = [await addLiveBankAccount(organisationId, '2100001'), await addLiveBankAccount(organisationId, '2100002')];

    const adapter = await ops('adapter', 'create', '--name', 'zengin-gateway', '--bank-account', accounts[0]!, '--bank-account', accounts[1]!);

    expect(adapter).toEqual({
      id: expect.stringMatching(/^adp_/),
      object: 'bank_adapter',
      name: 'zengin-gateway',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
      bank_account_ids: [...accounts].sort(),
      created_at: expect.any(String),
      revoked_at: null,
    });
    const row = await prisma.bankAdapter.findUniqueOrThrow({ where: { id: String(adapter.id) }, include: { accounts: true } });
    expect(row.name).toBe('zengin-gateway');
    expect(row.accounts.map((a) => a.bankAccountId).sort()).toEqual([...accounts].sort());
    expect(row.secretEncrypted).not.toContain(String(adapter.secret));
    expect(row.secretEncrypted).not.toContain(String(adapter.secret).slice('whsec_'.length));
    expect(new SecretBox(TEST_SECRETS_KEY).open(row.secretEncrypted, { kind: 'bank_adapter', id: row.id })).toBe(adapter.secret);
  });

  test('when accounts are bound and unbound, then the adapter lists exactly the bound ones, and binding or unbinding again changes nothing', async () => {
    const organisationId = await createOrganisation();
    const [first, second] = [await addLiveBankAccount(organisationId, '2200001'), await addLiveBankAccount(organisationId, '2200002')];
    const adapter = await ops('adapter', 'create', '--name', 'a', '--bank-account', first);

    const bound = await ops('adapter', 'bind', '--adapter', String(adapter.id), '--bank-account', second);
    const boundAgain = await ops('adapter', 'bind', '--adapter', String(adapter.id), '--bank-account', second);
    const unbound = await ops('adapter', 'unbind', '--adapter', String(adapter.id), '--bank-account', first);
    const unboundAgain = await ops('adapter', 'unbind', '--adapter', String(adapter.id), '--bank-account', first);
    const list = await ops('adapter', 'list');

    expect(bound.bank_account_ids).toEqual([first, second].sort());
    expect(boundAgain).toEqual(bound);
    expect(unbound.bank_account_ids).toEqual([second]);
    expect(unboundAgain).toEqual(unbound);
    expect((list.data as { id: string }[]).find((a) => a.id === adapter.id)).toEqual(unbound);
  });

  test('when an adapter is revoked, then revoked_at is set, revoking again keeps it, and it can no longer be bound', async () => {
    const organisationId = await createOrganisation();
    const account = await addLiveBankAccount(organisationId, '2300001');
    const adapter = await ops('adapter', 'create', '--name', 'a', '--bank-account', account);

    const revoked = await ops('adapter', 'revoke', '--adapter', String(adapter.id));
    const revokedAgain = await ops('adapter', 'revoke', '--adapter', String(adapter.id));

    expect(revoked.revoked_at).toEqual(expect.any(String));
    expect(revokedAgain).toEqual(revoked);
    const refusal = await runOps(db.url, ['adapter', 'bind', '--adapter', String(adapter.id), '--bank-account', account]);
    expect(expectFailure(refusal, 2).message).toMatch(/is revoked/);
  });
});

describe('settings set', () => {
  test('when settings of one mode are set, then that row changes, the settings are printed and the other mode is untouched', async () => {
    const organisationId = await createOrganisation();

    const settings = await ops(
      'settings',
      'set',
      '--org',
      organisationId,
      '--mode',
      'live',
      '--auto-confirm-late-orders',
      'true',
      '--matching-rules',
      'kana_width,truncated',
    );
    const onlyRules = await ops('settings', 'set', '--org', organisationId, '--mode', 'live', '--matching-rules', '');

    expect(settings).toEqual({
      object: 'settings',
      auto_confirm_late_orders: true,
      matching_rules: ['kana_width', 'truncated'],
      livemode: true,
    });
    expect(onlyRules).toEqual({ object: 'settings', auto_confirm_late_orders: true, matching_rules: [], livemode: true });
    const rows = await prisma.setting.findMany({ where: { organisationId }, orderBy: { mode: 'asc' } });
    expect(rows).toEqual([
      expect.objectContaining({ mode: 'live', autoConfirmLateOrders: true, matchingRules: [] }),
      expect.objectContaining({ mode: 'test', autoConfirmLateOrders: false, matchingRules: [] }),
    ]);
  });
});

describe('list and get', () => {
  /** Everything a list or get printed, as one text: no secret may be in it. */
  const printed: string[] = [];
  const read = async (...args: string[]) => {
    const output = await ops(...args);
    printed.push(JSON.stringify(output));
    return output;
  };
  const idsOf = (list: Record<string, unknown>) => (list.data as { id: string }[]).map((item) => item.id);

  test('when an organisation is created, then org get prints what org create printed, and org list pages through it', async () => {
    const created: Record<string, unknown>[] = [];
    for (const name of ['一覧商店 1', '一覧商店 2', '一覧商店 3']) created.push(await ops('org', 'create', '--name', name, '--owner-email', 'a@example.com'));

    const got = await read('org', 'get', '--org', String(created[0]!.id));
    const all = await read('org', 'list', '--limit', '1000');
    const page = await read('org', 'list', '--limit', '1', '--starting-after', String(created[0]!.id));
    const afterLast = await read('org', 'list', '--starting-after', String(created[2]!.id));

    expect(got).toEqual(created[0]);
    expect((all.data as unknown[]).slice(-3)).toEqual(created);
    expect(page).toEqual({ object: 'list', data: [created[1]], has_more: true });
    expect(afterLast).toEqual({ object: 'list', data: [], has_more: false });
  });

  test('when keys are issued and one revoked, then key get and key list show them with their hint and never their text or hash', async () => {
    const organisationId = await createOrganisation('鍵商店');
    const testKey = await ops('key', 'issue', '--org', organisationId, '--mode', 'test', '--name', 'server');
    const liveKey = await ops('key', 'issue', '--org', organisationId, '--mode', 'live', '--name', 'live', '--permission', 'read_only');
    const revoked = await ops('key', 'revoke', '--key', String(liveKey.id));

    const got = await read('key', 'get', '--key', String(testKey.id));
    const list = await read('key', 'list', '--org', organisationId);
    const liveOnly = await read('key', 'list', '--org', organisationId, '--mode', 'live');

    const { key: testKeyText, ...testKeyFields } = testKey;
    expect(got).toEqual({ ...testKeyFields, key_hint: `svc_test_...${String(testKeyText).slice(-4)}`, revoked_at: null, last_used_at: null });
    expect(idsOf(list)).toEqual([testKey.id, liveKey.id]);
    expect(liveOnly.data).toEqual([expect.objectContaining({ id: liveKey.id, mode: 'live', permission: 'read_only', revoked_at: revoked.revoked_at })]);
    const hashes = (await prisma.apiKey.findMany({ where: { organisationId } })).map((row) => row.keyHash);
    for (const text of printed) {
      expect(text).not.toContain(String(testKeyText));
      expect(text).not.toContain(String(liveKey.key));
      for (const hash of hashes) expect(text).not.toContain(hash);
    }
  });

  test('when bank accounts exist, then bank-account get prints what add printed and bank-account list filters by organisation and mode', async () => {
    const organisationId = await createOrganisation('口座商店');
    await ops('key', 'issue', '--org', organisationId, '--mode', 'test', '--name', 'k');
    const added = await ops(...bankAccountAdd(organisationId, { 'account-number': '7777777', 'holder-name': 'ｺｳｻﾞ' }));

    const got = await read('bank-account', 'get', '--bank-account', String(added.id));
    const all = await read('bank-account', 'list', '--org', organisationId);
    const live = await read('bank-account', 'list', '--org', organisationId, '--mode', 'live');

    expect(got).toEqual(added);
    const testPool = Array.from({ length: TEST_DEDICATED_POOL }, () => expect.objectContaining({ livemode: false, dedicated: true }));
    expect(all.data).toEqual([expect.objectContaining({ livemode: false, organisation_id: organisationId, dedicated: false }), ...testPool, added]);
    expect(live).toEqual({ object: 'list', data: [added], has_more: false });
    expect(printed.join('\n')).not.toContain('7777777');
  });

  test('when an adapter is created, then adapter get prints it without its secret, as adapter list does', async () => {
    const organisationId = await createOrganisation('アダプタ商店');
    const account = await addLiveBankAccount(organisationId, '2400001');
    const { secret, ...created } = await ops('adapter', 'create', '--name', 'gateway', '--bank-account', account);

    const got = await read('adapter', 'get', '--adapter', String(created.id));
    const list = await read('adapter', 'list', '--limit', '1000');

    expect(got).toEqual(created);
    expect((list.data as { id: string }[]).find((adapter) => adapter.id === created.id)).toEqual(created);
    const sealed = (await prisma.bankAdapter.findUniqueOrThrow({ where: { id: String(created.id) } })).secretEncrypted;
    for (const text of printed) {
      expect(text).not.toContain(String(secret).slice('whsec_'.length));
      expect(text).not.toContain(sealed);
    }
  });

  test('when console users are added, then user get and user list show them without the setup link or any hash', async () => {
    const organisationId = await createOrganisation('利用者商店');
    const admin = await ops('user', 'add', '--org', organisationId, '--email', 'Admin@Example.com', '--role', 'admin');
    const viewer = await ops('user', 'add', '--org', organisationId, '--email', 'viewer@example.com', '--role', 'viewer');

    const got = await read('user', 'get', '--user', String(admin.id));
    const list = await read('user', 'list', '--org', organisationId);

    expect(got).toEqual({
      id: admin.id,
      object: 'user',
      organisation_id: organisationId,
      email: 'admin@example.com',
      role: 'admin',
      password_set: false,
      password_setup_expires_at: expect.any(String),
      totp_enabled: false,
      created_at: expect.any(String),
    });
    expect(admin.email).toBe(got.email);
    expect(list).toEqual({ object: 'list', data: [got, expect.objectContaining({ id: viewer.id, role: 'viewer' })], has_more: false });
    const setupTokens = [admin, viewer].map((user) => new URL(String(user.password_setup_url)).searchParams.get('token')!);
    for (const token of setupTokens) expect(token).toMatch(/^[0-9A-Za-z]{40}$/);
    const rows = await prisma.user.findMany({ where: { organisationId } });
    for (const text of printed) {
      for (const token of setupTokens) expect(text).not.toContain(token);
      for (const row of rows) expect(text).not.toContain(String(row.passwordSetupHash));
    }
  });

  test.each([
    ['org get', ['org', 'get', '--org', 'org_AAAAAAAAAAAAAAAAAAAAAAAA']],
    ['key get', ['key', 'get', '--key', 'key_AAAAAAAAAAAAAAAAAAAAAAAA']],
    ['bank-account get', ['bank-account', 'get', '--bank-account', 'ba_AAAAAAAAAAAAAAAAAAAAAAAA']],
    ['adapter get', ['adapter', 'get', '--adapter', 'adp_AAAAAAAAAAAAAAAAAAAAAAAA']],
    ['user get', ['user', 'get', '--user', 'usr_AAAAAAAAAAAAAAAAAAAAAAAA']],
    ['key list of an organisation that does not exist', ['key', 'list', '--org', 'org_AAAAAAAAAAAAAAAAAAAAAAAA']],
    ['a page after an id that names nothing', ['org', 'list', '--starting-after', 'org_AAAAAAAAAAAAAAAAAAAAAAAA']],
  ])('when %s names nothing, then it exits 3 with resource_missing', async (_, args) => {
    const run = await runOps(db.url, args);

    expect(expectFailure(run, 3).code).toBe('resource_missing');
  });

  test('when a user is added with an e-mail another user has, then it exits 4 with already_exists', async () => {
    const organisationId = await createOrganisation('重複商店');
    await ops('user', 'add', '--org', organisationId, '--email', 'twice@example.com', '--role', 'viewer');

    const run = await runOps(db.url, ['user', 'add', '--org', organisationId, '--email', 'TWICE@example.com', '--role', 'admin']);

    expect(expectFailure(run, 4)).toMatchObject({ code: 'already_exists', param: 'email' });
    expect(await prisma.user.count({ where: { organisationId } })).toBe(1);
  });

  test("when a user's address is another organisation's active console account, then adding it exits 4 with already_exists", async () => {
    const first = await createOrganisation('先の店');
    const added = await ops('user', 'add', '--org', first, '--email', 'active@example.com', '--role', 'viewer');
    await prisma.user.update({ where: { id: String(added.id) }, data: { passwordHash: 'scrypt$x', activatedAt: new Date() } });
    const second = await createOrganisation('後の店');

    const run = await runOps(db.url, ['user', 'add', '--org', second, '--email', 'active@example.com', '--role', 'admin']);

    expect(expectFailure(run, 4)).toMatchObject({ code: 'already_exists', param: 'email' });
    expect(await prisma.user.count({ where: { organisationId: second } })).toBe(0);
  });

  test('when a user is reset, then their sessions, password, second factor and recovery codes are gone and a new link is printed; an unknown user exits 3', async () => {
    const organisationId = await createOrganisation('リセット商店');
    const added = await ops('user', 'add', '--org', organisationId, '--email', 'reset@example.com', '--role', 'operator');
    const id = String(added.id);
    const now = new Date();
    await prisma.user.update({
      where: { id },
      data: { passwordHash: 'scrypt$x', activatedAt: now, passwordSetupHash: null, passwordSetupExpiresAt: null, totpSecretEncrypted: 't', totpEnabledAt: now },
    });
    await prisma.consoleSession.create({ data: { idHash: 'reset-session', userId: id, csrfToken: 'c', createdAt: now, lastSeenAt: now } });
    await prisma.userRecoveryCode.create({ data: { userId: id, codeHash: 'h', createdAt: now } });

    const reset = await ops('user', 'reset', '--user', id);
    const unknown = await runOps(db.url, ['user', 'reset', '--user', 'usr_AAAAAAAAAAAAAAAAAAAAAAAA']);

    expect(reset).toEqual({
      id,
      email: 'reset@example.com',
      role: 'operator',
      organisation_id: organisationId,
      password_setup_url: expect.stringMatching(/\/dashboard\/setup-password\?token=[0-9A-Za-z]{40}$/),
    });
    expect(await prisma.user.findUniqueOrThrow({ where: { id } })).toMatchObject({
      passwordHash: null,
      totpSecretEncrypted: null,
      totpEnabledAt: null,
      activatedAt: now,
      passwordSetupHash: expect.any(String),
    });
    expect(await prisma.consoleSession.count({ where: { userId: id } })).toBe(0);
    expect(await prisma.userRecoveryCode.count({ where: { userId: id } })).toBe(0);
    expect(expectFailure(unknown, 3).code).toBe('resource_missing');
  });

  test('when --limit is out of range, then it exits 2 naming the range', async () => {
    const run = await runOps(db.url, ['org', 'list', '--limit', '1001']);

    expect(expectFailure(run, 2).message).toContain('--limit must be a whole number from 1 to 1000');
  });
});

describe('invalid input', () => {
  let organisationId: string;
  let otherOrganisationId: string;
  let otherOrganisationsLiveAccountId: string;
  let keyId: string;

  beforeAll(async () => {
    organisationId = await createOrganisation();
    otherOrganisationId = await createOrganisation('他社');
    otherOrganisationsLiveAccountId = await addLiveBankAccount(otherOrganisationId, '1111111');
    keyId = await issueKey(organisationId, 'live');
  });

  /** The case, its arguments and the exit code: 2 the input is wrong, 3 not found, 4 conflict. */
  const cases: [string, () => string[], number][] = [
    ['no command', () => [], 2],
    ['an unknown command', () => ['org', 'delete', '--org', organisationId], 2],
    ['an unknown flag', () => ['key', 'issue', '--org', organisationId, '--mode', 'test', '--name', 'k', '--scope', 'all'], 2],
    ['a positional argument', () => ['adapter', 'create', 'extra', '--name', 'a'], 2],
    ['an adapter without a bank account', () => ['adapter', 'create', '--name', 'a'], 2],
    ['an adapter for a test bank account', () => ['adapter', 'create', '--name', 'a', '--bank-account', 'ba_AAAAAAAAAAAAAAAAAAAAAAAA'], 2],
    [
      'an adapter bound twice to one account',
      () => ['adapter', 'create', '--name', 'a', '--bank-account', otherOrganisationsLiveAccountId, '--bank-account', otherOrganisationsLiveAccountId],
      2,
    ],
    ['a bad account type', () => bankAccountAdd(organisationId, { 'account-type': 'futsu' }), 2],
    ['a bad mode', () => ['key', 'issue', '--org', organisationId, '--mode', 'production', '--name', 'k'], 2],
    ['a missing required flag', () => ['key', 'issue', '--org', organisationId, '--mode', 'test'], 2],
    ['a flag without its value', () => ['org', 'create', '--name', '--owner-email', 'a@example.com'], 2],
    ['a flag given twice', () => ['key', 'issue', '--org', organisationId, '--mode', 'live', '--mode', 'test', '--name', 'k'], 2],
    ['a bad permission', () => ['key', 'issue', '--org', organisationId, '--mode', 'test', '--name', 'k', '--permission', 'admin'], 2],
    ['an organisation that does not exist', () => ['key', 'issue', '--org', 'org_AAAAAAAAAAAAAAAAAAAAAAAA', '--mode', 'test', '--name', 'k'], 3],
    [
      '--bank-account on a test key',
      () => ['key', 'issue', '--org', organisationId, '--mode', 'test', '--name', 'k', '--bank-account', otherOrganisationsLiveAccountId],
      2,
    ],
    [
      "--bank-account of another organisation's account",
      () => ['key', 'issue', '--org', organisationId, '--mode', 'live', '--name', 'k', '--bank-account', otherOrganisationsLiveAccountId],
      2,
    ],
    ['a bad bank code', () => bankAccountAdd(organisationId, { 'bank-code': '01' }), 2],
    ['a bad account number', () => bankAccountAdd(organisationId, { 'account-number': '12345678' }), 2],
    ['--count without --dedicated', () => bankAccountAdd(organisationId, { count: '3' }), 2],
    ['--count past 9999999', () => [...bankAccountAdd(organisationId, { 'account-number': '9999998', count: '3' }), '--dedicated'], 2],
    ['--dedicated with a value', () => [...bankAccountAdd(organisationId), '--dedicated=yes'], 2],
    ['a test bank account', () => bankAccountAdd(organisationId, { mode: 'test' }), 2],
    [
      'an account the organisation already has',
      () => bankAccountAdd(otherOrganisationId, { 'bank-code': '0009', 'branch-code': '100', 'account-number': '1111111', 'holder-name': 'ｱｸﾒ(ｶ' }),
      4,
    ],
    ['a malformed e-mail', () => ['org', 'create', '--name', 'n', '--owner-email', 'not-an-email'], 2],
    ['an unknown matching rule', () => ['settings', 'set', '--org', organisationId, '--mode', 'live', '--matching-rules', 'kana_width,fuzzy'], 2],
    ['a matching rule named twice', () => ['settings', 'set', '--org', organisationId, '--mode', 'live', '--matching-rules', 'decorated,decorated'], 2],
    ['a non-boolean auto-confirm', () => ['settings', 'set', '--org', organisationId, '--mode', 'live', '--auto-confirm-late-orders', 'yes'], 2],
    ['nothing to set', () => ['settings', 'set', '--org', organisationId, '--mode', 'live'], 2],
    ['a malformed key id', () => ['key', 'revoke', '--key', 'svc_live_x'], 2],
    ['a key that does not exist', () => ['key', 'revoke', '--key', 'key_AAAAAAAAAAAAAAAAAAAAAAAA'], 3],
  ];

  test.each(cases)('when given %s, then it exits with the code of its kind, one JSON error on stderr, and writes nothing', async (_, args, exitCode) => {
    const before = await writtenRows();
    const settingsBefore = await prisma.setting.findMany({ orderBy: [{ organisationId: 'asc' }, { mode: 'asc' }] });
    const keysBefore = await prisma.apiKey.findMany({ orderBy: { id: 'asc' } });

    const run = await runOps(db.url, args());

    expectFailure(run, exitCode);
    expect(await writtenRows()).toEqual(before);
    expect(await prisma.setting.findMany({ orderBy: [{ organisationId: 'asc' }, { mode: 'asc' }] })).toEqual(settingsBefore);
    expect(await prisma.apiKey.findMany({ orderBy: { id: 'asc' } })).toEqual(keysBefore);
  });

  test('when --bank-account is given on a test key, then the message says it is for live keys only', async () => {
    const run = await runOps(db.url, [
      'key',
      'issue',
      '--org',
      organisationId,
      '--mode',
      'test',
      '--name',
      'k',
      '--bank-account',
      otherOrganisationsLiveAccountId,
    ]);

    expect(expectFailure(run, 2)).toMatchObject({
      code: 'parameter_invalid',
      param: 'bank-account',
      message: expect.stringContaining('--bank-account is only for live keys'),
    });
  });

  test('when an unknown flag is given, then the message names it and shows the usage', async () => {
    const run = await runOps(db.url, ['key', 'revoke', '--key', keyId, '--force']);

    const error = expectFailure(run, 2);
    expect(error.code).toBe('usage_error');
    expect(error.message).toContain("'--force'");
    expect(error.message).toContain('usage: ops key revoke --key KEY_ID');
    expect((await prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } })).revokedAt).toBeNull();
  });
});
