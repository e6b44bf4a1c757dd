import { TestSystem, type MerchantClient } from '@pmatch/testkit';

/**
 * The buyer's pages as markup, read over HTTP from the running orders-api (their components are
 * rendered by Preact there): what a buyer typed or a merchant wrote shows as text, and the payer
 * name is shown as a bank prints it.
 */

let system: TestSystem;
let merchant: MerchantClient;

beforeAll(async () => {
  system = await TestSystem.start();
  ({ client: merchant } = await system.createMerchant({ name: 'マークアップ商店' }));
});

afterAll(async () => {
  await system?.stop();
});

const pageOf = async (url: string, headers: Record<string, string> = {}) => (await fetch(url, { headers })).text();

test('when the typed name and the item hold markup, then the payment link page shows them as text', async () => {
  const link = await merchant.request('POST', '/v1/payment-links', { amount: 3000, item_name: '<script>x</script>' });
  expect(link.status).toBe(201);

  const res = await fetch(link.body.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ step: 'preview', payer_name: '"><img src=x>', lang: 'ja' }),
  });
  const page = await res.text();

  expect(res.status).toBe(400);
  expect(page).not.toContain('<script>x');
  expect(page).not.toContain('<img');
  expect(page).toContain('&lt;script>x&lt;/script>');
  expect(page).toContain('value="&quot;>&lt;img src=x>"');
});

test('when the payer name is printable, then the payment page asks for its bank form and names the form given when it differs', async () => {
  const order = await merchant.createOrder({ amount: 5000, payer_name: 'やまだ たろう' });

  const page = await pageOf(order.payment_url, { 'accept-language': 'ja' });

  expect(page).toContain('<p class="payer-name">ﾔﾏﾀﾞ ﾀﾛｳ</p>');
  expect(page).toContain('ご注文時のお名前「やまだ たろう」');
});

test('when no bank prints the payer name, then the payment page says the transfer will be held and what to do', async () => {
  const order = await merchant.createOrder({ amount: 5001, payer_name: '山田太郎' });

  const page = await pageOf(`${order.payment_url}?lang=en`);

  expect(page).toContain('characters banks cannot print');
  expect(page).toContain('tell the shop the date of your transfer');
});

test('when the seller lets transfer codes decide, then the payment page asks for the code before the name, a kanji order included; otherwise it never mentions one', async () => {
  const { client: coded } = await system.createMerchant({ name: '番号商店' });
  await coded.request('PATCH', '/v1/settings', { matching_rules: ['transfer_code'] });
  const printable = await coded.createOrder({ amount: 5003, payer_name: 'ヤマダ タロウ' });
  const kanji = await coded.createOrder({ amount: 5004, payer_name: '山田太郎' });
  const uncoded = await merchant.createOrder({ amount: 5005, payer_name: 'ヤマダ タロウ' });

  const withCode = await pageOf(printable.payment_url, { 'accept-language': 'ja' });
  const kanjiWithCode = await pageOf(kanji.payment_url, { 'accept-language': 'ja' });
  const withoutCode = await pageOf(uncoded.payment_url, { 'accept-language': 'ja' });

  expect(withCode).toContain(`<p class="payer-name"><span class="transfer-code">${printable.transfer_code}</span> ﾔﾏﾀﾞ ﾀﾛｳ</p>`);
  expect(withCode).toContain('ご依頼人名の前に次の7桁の振込番号');
  expect(kanjiWithCode).toContain(`<span class="transfer-code">${kanji.transfer_code}</span> （口座名義）`);
  expect(kanjiWithCode).not.toContain('<p class="notice notice-unprintable">');
  expect(withoutCode).not.toContain(uncoded.transfer_code);
  expect(withoutCode).not.toContain('振込番号');
});

test('when Accept-Language carries a malformed weight, then the buyer page and the console choose the same language', async () => {
  const order = await merchant.createOrder({ amount: 5002, payer_name: 'ﾔﾏﾀﾞ ﾀﾛｳ' });
  const header = { 'accept-language': 'en;q=abc, ja;q=0.5' };

  const buyer = await pageOf(order.payment_url, header);
  const console = await pageOf(`${system.apiUrl}/dashboard/login`, header);

  expect(/<html lang="(ja|en)"/.exec(buyer)![1]).toBe('ja');
  expect(/<html lang="(ja|en)"/.exec(console)![1]).toBe('ja');
});
