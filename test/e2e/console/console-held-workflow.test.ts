import type { Page } from 'playwright-core';
import { waitFor } from '@pmatch/testkit';
import { type Console, useConsole } from './support';

/** Working through held deposits: candidates side by side, fitting ones first, and the keyboard alone. */

let world: Console;

useConsole(async (started) => {
  world = started;
});

/** A deposit held because two orders of its amount fit its name; resolves with the deposit. */
async function heldBetweenTwo(amount: number, name: string, tag: string): Promise<{ id: string }> {
  await world.merchant.createOrder({ amount, payer_name: name, external_id: `${tag}-a`, item_name: 'お米 5kg', metadata: { description: '玄米' } });
  await world.merchant.createOrder({ amount, payer_name: name, external_id: `${tag}-b` });
  const deposit = await world.merchant.deposit(amount, name);
  expect(deposit.status).toBe('held');
  return deposit;
}

/** Resolves once the deposit's stored decision gives `reason`. */
async function heldAs(deposit: { id: string }, reason: string): Promise<void> {
  await waitFor(async () => ((await world.merchant.transaction(deposit.id)).decision?.reason === reason ? true : undefined), {
    what: `a deposit held as ${reason}`,
  });
}

/** An order registered after its deposit arrived but placed 30 minutes before it: a late order for that deposit. */
function lateOrderFor(deposit: { occurred_at: string }, amount: number, name: string, externalId: string) {
  return world.merchant.createOrder({
    amount,
    payer_name: name,
    external_id: externalId,
    ordered_at: new Date(Date.parse(deposit.occurred_at) - 30 * 60_000).toISOString(),
  });
}

/** A transfer that paid `${tag}-paid` arriving again, under another bank reference, while `${tag}-open` (same amount and name) is open. */
async function possibleDuplicate(amount: number, name: string, tag: string) {
  await world.merchant.createOrder({ amount, payer_name: name, external_id: `${tag}-paid` });
  expect(await world.merchant.deposit(amount, name)).toMatchObject({ status: 'confirmed' });
  await world.merchant.createOrder({ amount, payer_name: name, external_id: `${tag}-open` });
  const duplicate = await world.merchant.deposit(amount, name);
  expect(duplicate.decision.reason).toBe('possible_duplicate');
  return duplicate;
}

/** A deposit from ｺﾞﾄｳ ｼﾞﾛｳ fitting `${tag}-kana` by name, held because `${tag}-kanji` (後藤 次郎) may be read the same. */
async function heldBesideKanjiNamesake(amount: number, tag: string) {
  await world.merchant.createOrder({ amount, payer_name: 'ｺﾞﾄｳ ｼﾞﾛｳ', external_id: `${tag}-kana` });
  await world.merchant.createOrder({ amount, payer_name: '後藤 次郎', external_id: `${tag}-kanji` });
  const namesake = await world.merchant.deposit(amount, 'ｺﾞﾄｳ ｼﾞﾛｳ');
  expect(namesake.decision.candidates).toEqual(
    expect.arrayContaining([expect.objectContaining({ fit: 'exact' }), expect.objectContaining({ fit: null, possible_reading: true })]),
  );
  return namesake;
}

/** Presses one key and counts it. */
function keyboard(page: Page): { press: (key: string) => Promise<void>; count: () => number } {
  let presses = 0;
  return {
    press: async (key) => {
      presses += 1;
      await page.keyboard.press(key);
    },
    count: () => presses,
  };
}

const chosenOrder = async (page: Page, key: string) =>
  page.locator(`button[data-candidate="${key}"]`).evaluate((b) => (b.closest('form')!.querySelector('input[name="order_id"]') as HTMLInputElement).value);

test('when an operator works through three held deposits with the keyboard alone, then each takes two presses (choose, confirm), the next held deposit follows oldest first, and j/k move between them', async () => {
  const deposits = [
    await heldBetweenTwo(7101, 'キー イチ', 'kbd-1'),
    await heldBetweenTwo(7102, 'キー ニ', 'kbd-2'),
    await heldBetweenTwo(7103, 'キー サン', 'kbd-3'),
  ];
  const page = await world.logIn('operator');
  await page.goto(`${world.baseUrl}/dashboard/deposits/${deposits[0]!.id}`);
  const keys = keyboard(page);

  // The shortcuts are on the page.
  expect(await page.getByRole('navigation', { name: '保留の入金を順に確認' }).innerText()).toMatch(/j.*k[\s\S]*1.*9[\s\S]*c/);
  await keys.press('j');
  await page.waitForURL(`**/dashboard/deposits/${deposits[1]!.id}`);
  await keys.press('k');
  await page.waitForURL(`**/dashboard/deposits/${deposits[0]!.id}`);
  const moving = keys.count();

  const chosen: string[] = [];
  for (const [i, deposit] of deposits.entries()) {
    expect(page.url()).toContain(deposit.id);
    chosen.push(await chosenOrder(page, '1'));
    await keys.press('1');
    await keys.press('c');
    const next = deposits[i + 1];
    await page.waitForURL(next === undefined ? /\/dashboard\/deposits\?done=confirmed/ : new RegExp(`/dashboard/deposits/${next.id}\\?done=confirmed`));
    expect(await page.getByRole('status').innerText()).toContain('入金を確定しました');
  }

  expect(keys.count() - moving).toBe(2 * deposits.length);
  expect(await page.getByRole('status').innerText()).toBe('入金を確定しました。保留の入金はもうありません。');
  const after = await Promise.all(deposits.map((d) => world.merchant.transaction(d.id)));
  expect(after.map((t) => [t.status, t.order_id])).toEqual(chosen.map((orderId) => ['confirmed', orderId]));
});

test('when a held deposit is shown, then each candidate shows its order number, customer, date, item, expiry and age, fitting ones first with primary buttons and the others secondary', async () => {
  await world.merchant.createOrder({ amount: 7201, payer_name: 'ベツ ジン', external_id: 'side-other' });
  const deposit = await heldBetweenTwo(7201, 'ナラビ タロウ', 'side');
  const page = await world.logIn('operator');
  await page.goto(`${world.baseUrl}/dashboard/deposits/${deposit.id}`);

  const rows = page.getByRole('table', { name: '候補の注文' }).locator('tbody tr');
  expect(await rows.count()).toBe(3);
  const first = await rows.nth(0).innerText();
  for (const shown of ['side-a', 'ナラビ タロウ', 'お米 5kg（玄米）', '0日経過', '受付中']) expect(first).toContain(shown);
  expect(await rows.nth(2).innerText()).toContain('side-other');
  expect(await rows.nth(2).innerText()).toContain('名義が一致しない・対象外の候補');
  const classes = await page.locator('button[data-candidate]').evaluateAll((buttons) => buttons.map((b) => b.className));
  expect(classes).toEqual(['', '', 'secondary']);
});

test('when an operator confirms a deposit for an order of another name and ticks "remember", then the payer is taught, listed on the console and by the API, and forgotten there after asking first', async () => {
  const order = await world.merchant.createOrder({ amount: 7301, payer_name: 'オボエ ハナコ', external_id: 'remember-me' });
  const deposit = await world.merchant.deposit(7301, 'ｵﾎﾞｴ ﾀﾛｳ');
  expect(deposit.status).not.toBe('confirmed');
  const page = await world.logIn('operator');
  await page.goto(`${world.baseUrl}/dashboard/deposits/${deposit.id}`);

  await page.getByRole('checkbox', { name: 'この振込名義を「オボエ ハナコ」の支払者として覚える' }).check();
  await page.getByRole('button', { name: 'この注文で確定（remember-me）' }).click();

  expect(await page.getByRole('status').innerText()).toBe('入金を確定しました。');
  expect((await world.merchant.order(order.id)).status).toBe('paid');
  const aliases = (await world.merchant.request('GET', '/v1/payer-aliases')).body.data as { payer_name: string }[];
  expect(aliases.map((a) => a.payer_name)).toContain('オボエ ハナコ');

  await page.getByRole('link', { name: '入金', exact: true }).click();
  await page.getByRole('link', { name: '覚えた支払者の一覧' }).click();
  const row = page.getByRole('table', { name: '覚えた支払者' }).getByRole('row').filter({ hasText: 'オボエ ハナコ' });
  expect(await row.innerText()).toContain('ｵﾎﾞｴ ﾀﾛｳ');
  await row.getByRole('link', { name: /^忘れる/ }).click();
  expect(await page.getByRole('heading', { level: 2 }).first().innerText()).toContain('忘れますか');
  expect((await world.merchant.request('GET', '/v1/payer-aliases')).body.data).toHaveLength(aliases.length);
  await page.getByRole('button', { name: '忘れる' }).click();

  expect(await page.getByRole('status').innerText()).toBe('支払者を忘れました。');
  expect((await world.merchant.request('GET', '/v1/payer-aliases')).body.data).toHaveLength(aliases.length - 1);
  const audited = await world.system.sql(`SELECT user_id FROM audit_log WHERE action = 'payer_alias.forget'`);
  expect(audited).toEqual([{ user_id: world.people.operator.id }]);
});

test('when held deposits each have one fitting order, then bulk confirmation first shows what it would do, changes nothing until asked, then confirms exactly those and a reload repeats nothing', async () => {
  expect((await world.merchant.request('PATCH', '/v1/settings', { auto_confirm_late_orders: false })).status).toBe(200);
  const lateOnes = [];
  for (const [i, name] of ['バルク イチ', 'バルク ニ'].entries()) {
    const deposit = await world.merchant.deposit(7401 + i, name);
    const order = await lateOrderFor(deposit, 7401 + i, name, `bulk-${i}`);
    await heldAs(deposit, 'late_order');
    lateOnes.push({ deposit, order });
  }
  const ambiguous = await heldBetweenTwo(7403, 'バルク サン', 'bulk-two');
  const page = await world.logIn('operator');
  await page.goto(`${world.baseUrl}/dashboard/deposits?status=held`);

  await page.getByRole('link', { name: '今のルールで確定できる保留をまとめて確定' }).click();
  const summary = page.getByRole('table', { name: 'まとめて確定する保留の入金' });
  expect(await summary.innerText()).toContain('bulk-0');
  expect(await summary.innerText()).toContain('bulk-1');
  expect(await summary.innerText()).not.toContain('bulk-two');
  expect((await world.merchant.transaction(lateOnes[0]!.deposit.id)).status).toBe('held');
  await page.getByRole('button', { name: '2件をまとめて確定' }).click();

  expect(await page.getByRole('status').innerText()).toBe('2件の入金を確定しました。');
  for (const { deposit, order } of lateOnes) expect(await world.merchant.transaction(deposit.id)).toMatchObject({ status: 'confirmed', order_id: order.id });
  expect((await world.merchant.transaction(ambiguous.id)).status).toBe('held');
  expect(new URL(page.url()).pathname).toBe('/dashboard/deposits');
  expect((await page.reload())!.status()).toBe(200);
  const rows = await world.system.sql(`SELECT count(*)::int AS n FROM audit_log WHERE action = 'transaction.match' AND object_id = ANY($1)`, [
    lateOnes.map((l) => l.deposit.id),
  ]);
  expect(rows).toEqual([{ n: 2 }]);
});

test('when held deposits look clear by their stored candidates but are not (a possible duplicate, a namesake in kanji, a second order placed since, two deposits for one order), then bulk confirmation lists none of them and a clear one still', async () => {
  expect((await world.merchant.request('PATCH', '/v1/settings', { auto_confirm_late_orders: false })).status).toBe(200);
  const duplicate = await possibleDuplicate(7501, 'ﾌﾀﾀﾋﾞ ﾀﾛｳ', 'twice');
  const namesake = await heldBesideKanjiNamesake(7502, 'namesake');
  // Held for a late order, then a second order of the buyer's amount placed: the stored decision never saw it.
  const laterRival = await world.merchant.deposit(7503, 'ﾏﾀ ﾀﾛｳ');
  await lateOrderFor(laterRival, 7503, 'ﾏﾀ ﾀﾛｳ', 'late-first');
  await heldAs(laterRival, 'late_order');
  await lateOrderFor(laterRival, 7503, 'ﾏﾀ ﾀﾛｳ', 'late-second');
  // Two deposits, a day apart (not twins), held for one late order: each stored decision names the same order.
  const today = await world.merchant.deposit(7504, 'ﾌﾀﾘ ﾊﾅｺ');
  const dayBefore = await world.merchant.deposit(7504, 'ﾌﾀﾘ ﾊﾅｺ', { occurred_at: new Date(Date.parse(today.occurred_at) - 24 * 3600_000).toISOString() });
  const pair = [dayBefore, today];
  await lateOrderFor(dayBefore, 7504, 'ﾌﾀﾘ ﾊﾅｺ', 'one-for-two');
  for (const deposit of pair) await heldAs(deposit, 'late_order');
  // And one that is clear: held only because late orders are not confirmed automatically.
  const clear = await world.merchant.deposit(7505, 'ﾊｯｷﾘ ｼﾞﾛｳ');
  const clearOrder = await lateOrderFor(clear, 7505, 'ﾊｯｷﾘ ｼﾞﾛｳ', 'clear-late');
  await heldAs(clear, 'late_order');
  const page = await world.logIn('operator');

  await page.goto(`${world.baseUrl}/dashboard/deposits/bulk-confirm`);

  const summary = await page.getByRole('table', { name: 'まとめて確定する保留の入金' }).innerText();
  for (const shown of ['twice-open', 'namesake-kana', 'late-first', 'late-second', 'one-for-two']) expect(summary).not.toContain(shown);
  expect(summary).toContain('clear-late');
  const pairs = await page.locator('input[name="pair"]').evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).value));
  expect(pairs).toContain(`${clear.id}:${clearOrder.id}`);
  for (const deposit of [duplicate, namesake, laterRival, ...pair]) expect(pairs.join(' ')).not.toContain(deposit.id);
});

test('when a second order of the amount is placed between the summary and the button, then bulk confirmation leaves that deposit held and says so', async () => {
  expect((await world.merchant.request('PATCH', '/v1/settings', { auto_confirm_late_orders: false })).status).toBe(200);
  const deposit = await world.merchant.deposit(7601, 'ｱﾄｶﾗ ﾀﾛｳ');
  const first = await lateOrderFor(deposit, 7601, 'ｱﾄｶﾗ ﾀﾛｳ', 'race-first');
  await heldAs(deposit, 'late_order');
  const page = await world.logIn('operator');
  await page.goto(`${world.baseUrl}/dashboard/deposits/bulk-confirm`);
  expect(await page.locator('input[name="pair"]').evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).value))).toContain(
    `${deposit.id}:${first.id}`,
  );

  await lateOrderFor(deposit, 7601, 'ｱﾄｶﾗ ﾀﾛｳ', 'race-second');
  await page.getByRole('button', { name: /件をまとめて確定$/ }).click();

  expect(await page.getByRole('status').innerText()).toMatch(/件の入金を確定しました。[1-9][0-9]*件はその間に状態が変わったため、そのままです。$/);
  expect(await world.merchant.transaction(deposit.id)).toMatchObject({ status: 'held', order_id: null });
  expect((await world.merchant.order(first.id)).status).toBe('open');
});

test('when nothing is chosen, then c confirms only the order the matcher would confirm the deposit for now: a late order yes, a possible duplicate or a namesake in kanji never', async () => {
  expect((await world.merchant.request('PATCH', '/v1/settings', { auto_confirm_late_orders: false })).status).toBe(200);
  const duplicate = await possibleDuplicate(7701, 'ﾆﾄﾞﾒ ﾀﾛｳ', 'c');
  const namesake = await heldBesideKanjiNamesake(7702, 'c');
  const late = await world.merchant.deposit(7703, 'ｵｸﾚﾃ ﾀﾛｳ');
  const lateOrder = await lateOrderFor(late, 7703, 'ｵｸﾚﾃ ﾀﾛｳ', 'c-late');
  await heldAs(late, 'late_order');
  const page = await world.logIn('operator');
  const confirmableWithoutChoice = async (depositId: string) => {
    await page.goto(`${world.baseUrl}/dashboard/deposits/${depositId}`);
    expect(await page.locator('button[data-candidate]:not(.secondary)').count()).toBe(1);
    return page.locator('button[data-candidate][data-without-choice]').count();
  };

  expect(await confirmableWithoutChoice(duplicate.id)).toBe(0);
  expect(await confirmableWithoutChoice(namesake.id)).toBe(0);
  expect(await confirmableWithoutChoice(late.id)).toBe(1);
  await page.keyboard.press('c');
  await page.waitForURL(/done=confirmed/);

  expect(await world.merchant.transaction(late.id)).toMatchObject({ status: 'confirmed', order_id: lateOrder.id });
  for (const held of [duplicate, namesake]) expect((await world.merchant.transaction(held.id)).status).toBe('held');
});
