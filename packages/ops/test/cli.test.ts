import { createPrisma, type PrismaClient } from '@pmatch/db';
import { SecretBox, sha256Hex } from '@pmatch/platform';
import { createTestDatabase, type TestDatabase } from '@pmatch/testkit';
import * as commands from '../src/commands';
import { TEST_SECRETS_KEY, runOps, runOpsOk } from './run-ops';

let db: TestDatabase;
let prisma: PrismaClient;

beforeAll(async () => {
  db = await createTestDatabase();
  prisma = createPrisma(db.url, { poolSize: 2 });
});

afterAll(async () => {
  await prisma.$disconnect();
  await db.drop();
});

/** Runs the built CLI and asserts it succeeded with exactly one JSON object on stdout. */
const ops = (...args: string[]) => runOpsOk(db.url, args);

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

  test('when the first test key is issued, then it creates the one test bank account, and a second test key creates none', async () => {
    const organisationId = await createOrganisation('テスト商店');

    await ops('key', 'issue', '--org', organisationId, '--mode', 'test', '--name', 'first');
    const afterFirst = await prisma.bankAccount.findMany({ where: { organisationId } });
    await ops('key', 'issue', '--org', organisationId, '--mode', 'test', '--name', 'second', '--permission', 'read_only');
    const afterSecond = await prisma.bankAccount.findMany({ where: { organisationId } });

    expect(afterFirst).toEqual([
      expect.objectContaining({
        mode: 'test',
        bankCode: '9999',
        bankName: 'テスト銀行',
        branchCode: '001',
        branchName: 'テスト支店',
        accountNumber: expect.stringMatching(/^[0-9]{7}$/),
        holderName: 'テスト商店',
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
      'key', 'issue', '--org', organisationId, '--mode', 'live', '--name', 'one account', '--permission', 'read_only',
      '--bank-account', accountId,
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

    const account = await ops(
      'bank-account', 'add', '--org', organisationId, '--mode', 'live',
      '--bank-code', '0001', '--branch-code', '001', '--account-number', '1234567', '--holder-name', 'ｱｸﾒ(ｶ',
      '--bank-name', 'みずほ銀行', '--branch-name', '本店',
    );

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
      created_at: expect.any(String),
    });
    expect(JSON.stringify(account)).not.toContain('1234567');
    const row = await prisma.bankAccount.findUniqueOrThrow({ where: { id: String(account.id) } });
    expect(row).toMatchObject({ organisationId, mode: 'live', accountNumber: '1234567' });
  });
});

describe('bank adapters', () => {
  test('when an adapter is created for accounts, then its secret is stored sealed and opens to the printed secret, and it is bound to those accounts', async () => {
    const organisationId = await createOrganisation();
    const accounts = [await addLiveBankAccount(organisationId, '2100001'), await addLiveBankAccount(organisationId, '2100002')];

    const adapter = await ops('adapter', 'create', '--name', 'zengin-gateway', '--bank-account', accounts[0]!, '--bank-account', accounts[1]!);

    expect(adapter).toEqual({
      id: expect.stringMatching(/^adp_/), object: 'bank_adapter', name: 'zengin-gateway', secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
      bank_account_ids: [...accounts].sort(), created_at: expect.any(String), revoked_at: null,
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
    expect(refusal).toMatchObject({ exitCode: 1, stdout: '' });
    expect(refusal.stderr).toMatch(/is revoked/);
  });
});

describe('settings set', () => {
  test('when settings of one mode are set, then that row changes, the settings are printed and the other mode is untouched', async () => {
    const organisationId = await createOrganisation();

    const settings = await ops(
      'settings', 'set', '--org', organisationId, '--mode', 'live',
      '--auto-confirm-late-orders', 'true', '--matching-rules', 'kana_width,truncated',
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

  const cases: [string, () => string[]][] = [
    ['no command', () => []],
    ['an unknown command', () => ['org', 'delete', '--org', organisationId]],
    ['an unknown flag', () => ['key', 'issue', '--org', organisationId, '--mode', 'test', '--name', 'k', '--scope', 'all']],
    ['a positional argument', () => ['adapter', 'create', 'extra', '--name', 'a']],
    ['an adapter without a bank account', () => ['adapter', 'create', '--name', 'a']],
    ['an adapter for a test bank account', () => ['adapter', 'create', '--name', 'a', '--bank-account', 'ba_AAAAAAAAAAAAAAAAAAAAAAAA']],
    ['an adapter bound twice to one account', () => ['adapter', 'create', '--name', 'a', '--bank-account', otherOrganisationsLiveAccountId, '--bank-account', otherOrganisationsLiveAccountId]],
    ['a bad account type', () => ['bank-account', 'add', '--org', organisationId, '--mode', 'live', '--bank-code', '0001', '--branch-code', '001', '--account-type', 'futsu', '--account-number', '1234567', '--holder-name', 'X']],
    ['a bad mode', () => ['key', 'issue', '--org', organisationId, '--mode', 'production', '--name', 'k']],
    ['a missing required flag', () => ['key', 'issue', '--org', organisationId, '--mode', 'test']],
    ['a flag without its value', () => ['org', 'create', '--name', '--owner-email', 'a@example.com']],
    ['a flag given twice', () => ['key', 'issue', '--org', organisationId, '--mode', 'live', '--mode', 'test', '--name', 'k']],
    ['a bad permission', () => ['key', 'issue', '--org', organisationId, '--mode', 'test', '--name', 'k', '--permission', 'admin']],
    ['an organisation that does not exist', () => ['key', 'issue', '--org', 'org_AAAAAAAAAAAAAAAAAAAAAAAA', '--mode', 'test', '--name', 'k']],
    ['--bank-account on a test key', () => ['key', 'issue', '--org', organisationId, '--mode', 'test', '--name', 'k', '--bank-account', otherOrganisationsLiveAccountId]],
    ["--bank-account of another organisation's account", () => ['key', 'issue', '--org', organisationId, '--mode', 'live', '--name', 'k', '--bank-account', otherOrganisationsLiveAccountId]],
    ['a bad bank code', () => ['bank-account', 'add', '--org', organisationId, '--mode', 'live', '--bank-code', '01', '--branch-code', '001', '--account-number', '1234567', '--holder-name', 'X']],
    ['a bad account number', () => ['bank-account', 'add', '--org', organisationId, '--mode', 'live', '--bank-code', '0001', '--branch-code', '001', '--account-number', '12345678', '--holder-name', 'X']],
    ['a test bank account', () => ['bank-account', 'add', '--org', organisationId, '--mode', 'test', '--bank-code', '0001', '--branch-code', '001', '--account-number', '1234567', '--holder-name', 'X']],
    ['an account the organisation already has', () => ['bank-account', 'add', '--org', otherOrganisationId, '--mode', 'live', '--bank-code', '0009', '--branch-code', '100', '--account-number', '1111111', '--holder-name', 'ｱｸﾒ(ｶ']],
    ['a malformed e-mail', () => ['org', 'create', '--name', 'n', '--owner-email', 'not-an-email']],
    ['an unknown matching rule', () => ['settings', 'set', '--org', organisationId, '--mode', 'live', '--matching-rules', 'kana_width,fuzzy']],
    ['a matching rule named twice', () => ['settings', 'set', '--org', organisationId, '--mode', 'live', '--matching-rules', 'decorated,decorated']],
    ['a non-boolean auto-confirm', () => ['settings', 'set', '--org', organisationId, '--mode', 'live', '--auto-confirm-late-orders', 'yes']],
    ['nothing to set', () => ['settings', 'set', '--org', organisationId, '--mode', 'live']],
    ['a malformed key id', () => ['key', 'revoke', '--key', 'svc_live_x']],
    ['a key that does not exist', () => ['key', 'revoke', '--key', 'key_AAAAAAAAAAAAAAAAAAAAAAAA']],
  ];

  test.each(cases)('when given %s, then it exits 1 with one line on stderr and writes nothing', async (_, args) => {
    const before = await writtenRows();
    const settingsBefore = await prisma.setting.findMany({ orderBy: [{ organisationId: 'asc' }, { mode: 'asc' }] });
    const keysBefore = await prisma.apiKey.findMany({ orderBy: { id: 'asc' } });

    const run = await runOps(db.url, args());

    expect(run.exitCode).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^ops: [^\n]+\n$/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(await writtenRows()).toEqual(before);
    expect(await prisma.setting.findMany({ orderBy: [{ organisationId: 'asc' }, { mode: 'asc' }] })).toEqual(settingsBefore);
    expect(await prisma.apiKey.findMany({ orderBy: { id: 'asc' } })).toEqual(keysBefore);
  });

  test('when --bank-account is given on a test key, then the message says it is for live keys only', async () => {
    const run = await runOps(db.url, ['key', 'issue', '--org', organisationId, '--mode', 'test', '--name', 'k', '--bank-account', otherOrganisationsLiveAccountId]);

    expect(run.stderr).toContain('--bank-account is only for live keys');
  });

  test('when an unknown flag is given, then the message names it and shows the usage', async () => {
    const run = await runOps(db.url, ['key', 'revoke', '--key', keyId, '--force']);

    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("'--force'");
    expect(run.stderr).toContain('usage: ops key revoke --key KEY_ID');
    expect((await prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } })).revokedAt).toBeNull();
  });
});
