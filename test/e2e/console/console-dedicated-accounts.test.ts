import { MerchantClient } from '@pmatch/testkit';
import type { Page } from 'playwright-core';
import { type Console, PASSWORD, seriousViolations, useConsole } from './support';

let world: Console;

useConsole(async (started) => {
  world = started;
});

const PAGE = '/dashboard/settings/dedicated-accounts';

/** The organisation's live dedicated accounts as stored: number, holder, whether a pool row exists and whom it was given to. */
async function livePool(): Promise<{ account_number: string; holder_name: string; order_id: string | null }[]> {
  return world.system.sql(
    `SELECT b.account_number, b.holder_name, d.order_id FROM bank_accounts b JOIN dedicated_accounts d ON d.bank_account_id = b.id
     WHERE b.organisation_id = $1 AND b.mode = 'live' AND b.dedicated ORDER BY b.account_number`,
    [world.orgId],
  );
}

/** Fills the add form: bank 0005 三菱ＵＦＪ銀行, branch 123 渋谷支店, ordinary, and the numbers as given. */
async function fillForm(page: Page, numbers: { first?: string; count?: string; list?: string }, holder = 'ｶ)ﾃｽﾄｼﾖｳﾃﾝ', bankCode = '0005'): Promise<void> {
  const form = page.getByRole('region', { name: '振込専用口座を登録' });
  await form.getByLabel('金融機関コード（4桁）').fill(bankCode);
  await form.getByLabel('金融機関名').fill('三菱ＵＦＪ銀行');
  await form.getByLabel('支店コード（3桁）').fill('123');
  await form.getByLabel('支店名').fill('渋谷支店');
  await form.getByLabel('口座種別').selectOption('ordinary');
  await form.getByLabel(/口座名義/).fill(holder);
  await form.getByLabel('最初の口座番号（7桁）').fill(numbers.first ?? '');
  await form.getByLabel(/件数/).fill(numbers.count ?? '');
  await form.getByLabel(/口座番号の一覧/).fill(numbers.list ?? '');
  await form.getByRole('button', { name: '内容を確認' }).click();
}

/** An admin's page in live mode, on the dedicated accounts page. */
async function adminOnPage(): Promise<Page> {
  const page = await world.logIn('admin');
  await world.switchMode(page, 'live');
  await page.getByRole('link', { name: '設定' }).click();
  await page.getByRole('link', { name: /振込専用口座/ }).click();
  await page.waitForURL(`${world.baseUrl}${PAGE}`);
  return page;
}

describe('adding dedicated transfer accounts', () => {
  test('when an admin adds 3 consecutive numbers and confirms with the password, then all 3 are free on the page, an order of the API gets the first, and the page shows whom each is given to as orders come and close', async () => {
    const page = await adminOnPage();
    expect(await page.getByText('まだ振込専用口座はありません。').count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);

    await fillForm(page, { first: '3100001', count: '3' });

    const question = page.getByRole('region', { name: '振込専用口座を3件登録しますか？' });
    const asked = await question.innerText();
    expect(asked).toContain('口座番号: 3100001 から 3100003');
    expect(asked).toContain('口座名義: ｶ)ﾃｽﾄｼﾖｳﾃﾝ');
    expect(asked).toContain('三菱ＵＦＪ銀行 (0005) 渋谷支店 (123) 普通');
    expect(await seriousViolations(page)).toEqual([]);
    // Nothing is added before the confirmation is sent.
    expect(await livePool()).toEqual([]);

    await question.getByLabel('パスワードを再入力').fill(PASSWORD);
    await question.getByRole('button', { name: '登録する' }).click();

    expect(await page.getByRole('status').innerText()).toContain('振込専用口座を3件登録しました。');
    expect(new URL(page.url()).pathname).toBe(PAGE);
    const rows = page.locator('table tbody tr');
    expect(await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())))).toEqual(
      ['3100001', '3100002', '3100003'].map((n) => ['三菱ＵＦＪ銀行 (0005)', '渋谷支店 (123)', '普通', n, 'ｶ)ﾃｽﾄｼﾖｳﾃﾝ', '空き', '']),
    );
    expect(await page.locator('dl.facts').innerText()).toMatch(/空き\s*3/);
    expect((await livePool()).map((a) => [a.account_number, a.holder_name, a.order_id])).toEqual(
      ['3100001', '3100002', '3100003'].map((n) => [n, 'ｶ)ﾃｽﾄｼﾖｳﾃﾝ', null]),
    );
    const audited = await world.system.sql<{ detail: Record<string, unknown> }>(
      `SELECT detail FROM audit_log WHERE action = 'dedicated_accounts.add' AND user_id = $1 ORDER BY id`,
      [world.people.admin.id],
    );
    expect(audited.map((row) => row.detail)).toEqual([
      expect.objectContaining({ outcome: 'done', count: 3, first_number: '3100001', last_number: '3100003', holder_name: 'ｶ)ﾃｽﾄｼﾖｳﾃﾝ' }),
    ]);

    const liveKey = await world.system.ops('key', 'issue', '--org', world.orgId, '--mode', 'live', '--name', 'live server');
    const live = new MerchantClient(world.baseUrl, String(liveKey.key));
    const order = await live.createOrder({ amount: 8800, external_id: 'dedicated-1', dedicated_account: true });
    expect(order.transfer_to).toMatchObject({ bank_code: '0005', branch_code: '123', account_number: '3100001', holder_name: 'ｶ)ﾃｽﾄｼﾖｳﾃﾝ' });

    await page.reload();
    const given = page.locator('table tbody tr', { hasText: '3100001' });
    expect(await given.innerText()).toContain('注文に割り当て中');
    expect(await given.getByRole('link', { name: '注文 dedicated-1' }).getAttribute('href')).toBe(`/dashboard/orders/${order.id}`);
    expect(await page.locator('dl.facts').innerText()).toMatch(/空き\s*2\s*注文に割り当て中\s*1/);

    // A buyer's account is theirs; an order closed leaves its account resting.
    const buyers = await live.createOrder({ amount: 4400, external_id: 'dedicated-2', dedicated_account: true, customer_reference: 'cust-7' });
    expect(buyers.transfer_to.account_number).toBe('3100002');
    await live.client.orders.cancel(order.id);
    await page.reload();
    expect(await page.locator('table tbody tr', { hasText: '3100001' }).innerText()).toContain('休止中');
    expect(await page.locator('table tbody tr', { hasText: '3100002' }).innerText()).toMatch(/お客さま専用[\s\S]*注文 dedicated-2[\s\S]*顧客番号 cust-7/);
    expect(await page.locator('dl.facts').innerText()).toMatch(/空き\s*1\s*注文に割り当て中\s*0\s*お客さま専用\s*1\s*休止中.*\s*1\s*合計\s*3/);

    // A new key's scope offers the organisation's own accounts, never its dedicated ones (the live one here: no choice to make).
    const keys = await adminOnPage();
    await keys.goto(`${world.baseUrl}/dashboard/api-keys`);
    expect(await keys.getByRole('heading', { name: 'APIキーを発行' }).count()).toBe(1);
    expect(await keys.locator('select[name="bank_account_id"]').count()).toBe(0);
  });

  test('when a number is already registered, or the password is wrong, or a field is wrong, then nothing is added and the form says why', async () => {
    const page = await adminOnPage();
    const before = await livePool();

    // A field wrong: named on the form, with what was typed kept.
    await fillForm(page, { first: '3200001', count: '3' }, 'テスト商店', '05');
    expect(page.url()).toContain('/confirm');
    const alert = await page.getByRole('alert').innerText();
    expect(alert).toContain('金融機関コードは4桁の数字で入力してください。');
    expect(alert).toContain('口座名義は、銀行が印字するとおりの半角カナ');
    expect(await page.getByLabel(/口座名義/).inputValue()).toBe('テスト商店');
    expect(await page.getByLabel('最初の口座番号（7桁）').inputValue()).toBe('3200001');

    // The password wrong: asked again, nothing added.
    await fillForm(page, { list: '3200001\n3200002' });
    await page.getByLabel('パスワードを再入力').fill('not the password');
    await page.getByRole('button', { name: '登録する' }).click();
    expect(await page.getByRole('alert').innerText()).toContain('パスワードが正しくありません。');
    expect(await livePool()).toEqual(before);

    // Numbers registered before: refused, naming them; the others are not added either.
    await page.goto(`${world.baseUrl}${PAGE}`);
    const taken = before.map((a) => a.account_number).slice(0, 2);
    expect(taken).toHaveLength(2);
    await fillForm(page, { list: [...taken, '3300001'].join('\n') });
    await page.getByLabel('パスワードを再入力').fill(PASSWORD);
    await page.getByRole('button', { name: '登録する' }).click();
    expect(await page.getByRole('alert').innerText()).toContain(`すでに登録されているため、何も登録していません: ${taken.join(', ')}`);
    expect(await page.getByLabel(/口座番号の一覧/).inputValue()).toBe([...taken, '3300001'].join('\n'));
    expect(await livePool()).toEqual(before);
    const refused = await world.system.sql<{ outcome: string }>(
      `SELECT detail->>'outcome' AS outcome FROM audit_log WHERE action = 'dedicated_accounts.add' AND detail->'already_registered' IS NOT NULL`,
    );
    expect(refused).toEqual([{ outcome: 'refused' }]);
  });

  test('when a viewer opens the page, then they see the pool without a form, and their forged addition is refused', async () => {
    const page = await world.logIn('viewer');
    await page.goto(`${world.baseUrl}${PAGE}`);
    // Test mode: the fixed pool of five, shown only.
    expect(await page.getByText('テストモードの振込専用口座は5つで固定です。').count()).toBe(1);
    expect(await page.locator('table tbody tr').count()).toBe(5);
    expect(await page.getByRole('button', { name: '内容を確認' }).count()).toBe(0);
    await world.switchMode(page, 'live');
    await page.goto(`${world.baseUrl}${PAGE}`);
    expect(await page.getByText('口座の登録は管理者だけが行えます。').count()).toBe(1);
    expect(await page.getByRole('button', { name: '内容を確認' }).count()).toBe(0);
    await page.goto(`${world.baseUrl}${PAGE}?lang=en`);
    expect(await page.getByRole('heading', { name: 'Dedicated transfer accounts', exact: true }).count()).toBe(1);
    expect(await page.getByText('Only admins can add accounts.').count()).toBe(1);
    expect(await page.locator('dl.facts').innerText()).toMatch(/Free\s*1\s*Given to an order\s*0\s*Given to a buyer\s*1\s*Resting.*\s*1\s*In all\s*3/);
    const before = await livePool();

    const session = await world.session('viewer');
    expect((await session.post('/dashboard/mode', { mode: 'live' })).status).toBe(303);
    const fields = {
      bank_code: '0005',
      bank_name: '三菱ＵＦＪ銀行',
      branch_code: '123',
      branch_name: '渋谷支店',
      account_type: 'ordinary',
      holder_name: 'ｶ)ﾃｽﾄｼﾖｳﾃﾝ',
      first_number: '3400001',
      count: '2',
      numbers: '',
      password: PASSWORD,
    };
    expect((await session.post(PAGE, fields)).status).toBe(403);
    expect((await session.post(`${PAGE}/confirm`, fields)).status).toBe(403);
    expect(await livePool()).toEqual(before);
  });
});

describe("an API key's scope", () => {
  test('when the organisation has its own live accounts and a pool, then a key may be scoped to each own account, named by bank, branch, type and number, never to the pool; the key list names the account it is scoped to', async () => {
    await world.system.addLiveBankAccount(world.orgId, { number: '4100001' });
    const named = await world.system.ops(
      ...['bank-account', 'add', '--org', world.orgId, '--mode', 'live', '--bank-code', '0009', '--bank-name', '三井住友銀行'],
      ...['--branch-code', '210', '--branch-name', '新宿支店', '--account-type', 'current', '--account-number', '4100002', '--holder-name', 'ﾃｽﾄｼﾖｳﾃﾝ'],
    );
    const page = await world.logIn('admin');
    await world.switchMode(page, 'live');
    await page.goto(`${world.baseUrl}/dashboard/api-keys`);

    const offered = await page.locator('select[name="bank_account_id"] option').allInnerTexts();
    expect(offered).toContain('0001 001 普通 4100001');
    expect(offered).toContain('三井住友銀行 (0009) 新宿支店 (210) 当座 4100002');
    const poolNumbers = (await livePool()).map((account) => account.account_number);
    expect(poolNumbers.length).toBeGreaterThan(0);
    for (const number of poolNumbers) expect(offered.join('\n')).not.toContain(number);
    expect(offered.join('\n')).not.toMatch(/ba_/);

    await page.getByLabel('名前').fill('新宿の注文サーバー');
    await page.getByLabel('口座の範囲').selectOption({ label: '三井住友銀行 (0009) 新宿支店 (210) 当座 4100002' });
    await page.getByRole('button', { name: 'APIキーを発行' }).click();
    expect(await world.system.sql(`SELECT bank_account_id FROM api_keys WHERE organisation_id = $1 AND name = '新宿の注文サーバー'`, [world.orgId])).toEqual([
      { bank_account_id: named.id },
    ]);
    await page.goto(`${world.baseUrl}/dashboard/api-keys`);
    expect(await page.locator('table tbody tr', { hasText: '新宿の注文サーバー' }).innerText()).toContain('三井住友銀行 (0009) 新宿支店 (210) 当座 4100002');
    expect(await seriousViolations(page)).toEqual([]);
  });
});
