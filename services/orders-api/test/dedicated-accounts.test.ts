import { AppError, type CreateOrderRequest } from '@pmatch/contracts';
import type { Database, PrismaClient } from '@pmatch/db';
import { ManualClock } from '@pmatch/platform';
import { rejectionOf, useServiceTestDatabase } from '@pmatch/testkit';
import type { Actor } from '../src/domain/actor';
import { countDedicatedAccounts } from '../src/data/dedicated-accounts';
import { newOrderWriter } from '../src/data/orders';
import { findPaymentPageData } from '../src/data/payment-page';
import { createOrder } from '../src/use-cases/create-order';

/** Orders on dedicated transfer accounts: given once, to one order or one buyer, and back after a rest. */

let owner: PrismaClient;
let database: Database;
const clock = new ManualClock('2026-12-01T00:00:00Z');
const REST_MS = 30 * 24 * 60 * 60 * 1000;
const deps = () => ({
  database,
  clock,
  publicBaseUrl: 'https://pay.example.com',
  outbox: { nudge: () => {}, publishLeased: () => {} },
  writeNewOrder: newOrderWriter(database.sql, 'https://pay.example.com', () => {}, 0),
  dedicatedAccountRestMs: REST_MS,
});

useServiceTestDatabase(
  'orders-api',
  async (opened) => {
    ({ owner, database } = opened);
  },
  { poolSize: 20 },
);

/** An organisation with one plain live account and `size` dedicated ones (numbers from 2000000), and an actor of all of them. */
async function organisationWithPool(name: string, size: number): Promise<{ actor: Actor; plain: string; pool: string[] }> {
  const organisationId = `org_${name}`;
  await owner.organisation.create({ data: { id: organisationId, name, ownerEmail: 'o@example.com' } });
  const account = (id: string, number: number, dedicated: boolean) => ({
    id,
    organisationId,
    mode: 'live',
    bankCode: '0310',
    bankName: 'GMOあおぞらネット銀行',
    branchCode: '101',
    branchName: 'ほうじちゃ支店',
    accountNumber: String(number),
    holderName: 'ｶ)ｱｸﾒ',
    dedicated,
    createdAt: new Date(`2026-11-01T00:00:00.${String(number % 1000).padStart(3, '0')}Z`),
  });
  const plain = `ba_${name}_plain`;
  const pool = Array.from({ length: size }, (_, i) => `ba_${name}_${String(i).padStart(4, '0')}`);
  await owner.bankAccount.createMany({ data: [account(plain, 1000000, false), ...pool.map((id, i) => account(id, 2000000 + i, true))] });
  await owner.dedicatedAccount.createMany({ data: pool.map((bankAccountId) => ({ bankAccountId, organisationId, mode: 'live' })) });
  const actor: Actor = {
    organisationId,
    mode: 'live',
    bankAccountId: null,
    permission: 'read_write',
    accountIds: [plain, ...pool],
    dedicatedAccountIds: pool,
    decidedBy: 'api_key:key_x',
    trigger: 'api',
  };
  return { actor, plain, pool };
}

const order = (externalId: string, more: Partial<CreateOrderRequest> = {}): CreateOrderRequest => ({
  amount: 5000,
  payer_name: 'ヤマダ タロウ',
  external_id: externalId,
  item_name: 'お米',
  dedicated_account: true,
  ...more,
});

async function closeOrder(id: string): Promise<void> {
  await owner.order.update({ where: { id }, data: { status: 'canceled', closedAt: clock.now() } });
}

describe('giving dedicated accounts', () => {
  test('when hundreds of orders ask for a dedicated account at once, then each gets its own, none is given twice, and each shows where to pay', async () => {
    const { actor, pool } = await organisationWithPool('many', 300);

    const created = await Promise.all(pool.map((_, i) => createOrder(deps(), actor, order(`many-${i}`))));

    const accounts = created.map((c) => c.order.bank_account_id);
    expect(new Set(accounts).size).toBe(300);
    expect(new Set(accounts)).toEqual(new Set(pool));
    expect(created.every((c) => c.created && c.order.dedicated_account && c.order.customer_reference === null)).toBe(true);
    const given = await owner.dedicatedAccount.findMany({ where: { organisationId: 'org_many' } });
    expect(new Map(given.map((d) => [d.bankAccountId, d.orderId]))).toEqual(new Map(created.map((c) => [c.order.bank_account_id, c.order.id])));
    const first = created.find((c) => c.order.bank_account_id === pool[0])!.order;
    expect(first.transfer_to).toEqual({
      bank_code: '0310',
      bank_name: 'GMOあおぞらネット銀行',
      branch_code: '101',
      branch_name: 'ほうじちゃ支店',
      account_type: 'ordinary',
      account_number: '2000000',
      holder_name: 'ｶ)ｱｸﾒ',
    });
  });

  test('when every dedicated account is given, then an order asking for one is refused 409 no_dedicated_account_free and nothing is stored', async () => {
    const { actor, pool } = await organisationWithPool('full', 2);
    await createOrder(deps(), actor, order('full-1'));
    await createOrder(deps(), actor, order('full-2'));
    const eventsBefore = await owner.event.count({ where: { organisationId: 'org_full' } });

    const refused = await rejectionOf(() => createOrder(deps(), actor, order('full-3')));

    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'no_dedicated_account_free', status: 409 });
    expect(await owner.order.count({ where: { organisationId: 'org_full' } })).toBe(2);
    expect(await owner.event.count({ where: { organisationId: 'org_full' } })).toBe(eventsBefore);
    expect(await countDedicatedAccounts(database.prisma, new Date(clock.now().getTime() - REST_MS))).toContainEqual({
      organisationId: 'org_full',
      mode: 'live',
      total: pool.length,
      free: 0,
    });
  });

  test('when a returning buyer orders again, then every order of theirs is on their one account, even two first orders at once, and other orders never get it', async () => {
    const { actor, pool } = await organisationWithPool('buyer', 3);

    const [first, same] = await Promise.all([
      createOrder(deps(), actor, order('buyer-1', { customer_reference: 'cust-42' })),
      createOrder(deps(), actor, order('buyer-2', { customer_reference: 'cust-42', amount: 7000 })),
    ]);
    await closeOrder(first.order.id);
    clock.advance(REST_MS * 2);
    const later = await createOrder(deps(), actor, order('buyer-3', { customer_reference: 'cust-42' }));
    const others = await Promise.all([createOrder(deps(), actor, order('other-1')), createOrder(deps(), actor, order('other-2'))]);

    expect(first.order.customer_reference).toBe('cust-42');
    expect(same.order.bank_account_id).toBe(first.order.bank_account_id);
    expect(later.order.bank_account_id).toBe(first.order.bank_account_id);
    expect(others.map((o) => o.order.bank_account_id).sort()).toEqual(pool.filter((id) => id !== first.order.bank_account_id).sort());
    expect(await owner.dedicatedAccount.findUnique({ where: { bankAccountId: first.order.bank_account_id } })).toMatchObject({
      customerReference: 'cust-42',
    });
  });

  test('when an order given an account closes, then the account rests and is given again only once the rest period has passed', async () => {
    const { actor, pool } = await organisationWithPool('rest', 1);
    const first = await createOrder(deps(), actor, order('rest-1'));
    await closeOrder(first.order.id);

    clock.advance(REST_MS - 1000);
    const resting = await rejectionOf(() => createOrder(deps(), actor, order('rest-2')));
    clock.advance(1000);
    const next = await createOrder(deps(), actor, order('rest-3'));

    expect(resting).toMatchObject({ code: 'no_dedicated_account_free' });
    expect(next.order.bank_account_id).toBe(pool[0]);
    expect(await owner.dedicatedAccount.findUnique({ where: { bankAccountId: pool[0]! } })).toMatchObject({ orderId: next.order.id });
  });

  test('when an order asks for a dedicated account with the same external_id again, then the first is answered and no second account is given', async () => {
    const { actor } = await organisationWithPool('again', 2);
    const first = await createOrder(deps(), actor, order('again-1'));

    const again = await createOrder(deps(), actor, order('again-1'));
    const otherContent = await rejectionOf(() => createOrder(deps(), actor, order('again-1', { customer_reference: 'cust-1' })));

    expect(again).toMatchObject({ created: false, order: { id: first.order.id, bank_account_id: first.order.bank_account_id } });
    expect(otherContent).toMatchObject({ code: 'external_id_conflict' });
    expect(await owner.dedicatedAccount.count({ where: { organisationId: 'org_again', orderId: { not: null } } })).toBe(1);
  });

  test('when an order names a dedicated account itself, or asks for a customer without one, or one with an account, then it is refused 400 and nothing is stored', async () => {
    const { actor, plain, pool } = await organisationWithPool('bad', 1);

    const named = await rejectionOf(() => createOrder(deps(), actor, order('bad-1', { dedicated_account: undefined, bank_account_id: pool[0]! })));
    const both = await rejectionOf(() => createOrder(deps(), actor, order('bad-2', { bank_account_id: plain })));
    const customerAlone = await rejectionOf(() => createOrder(deps(), actor, order('bad-3', { dedicated_account: undefined, customer_reference: 'c' })));
    const plainOrder = await createOrder(deps(), actor, order('bad-4', { dedicated_account: undefined }));

    for (const refused of [named, both, customerAlone]) expect(refused).toMatchObject({ code: 'parameter_invalid', status: 400 });
    expect(plainOrder.order).toMatchObject({ bank_account_id: plain, dedicated_account: false, transfer_to: { account_number: '1000000' } });
    expect(await owner.order.count({ where: { organisationId: 'org_bad' } })).toBe(1);
  });

  test("when a buyer opens the payment page of an order on a dedicated account, then the page is given that account as the order recorded it, and whether it is the order's own or the buyer's", async () => {
    const { actor, plain } = await organisationWithPool('page', 2);
    const perOrder = await createOrder(deps(), actor, order('page-1'));
    const perBuyer = await createOrder(deps(), actor, order('page-2', { customer_reference: 'cust-7' }));
    const shared = await createOrder(deps(), actor, order('page-3', { dedicated_account: undefined }));
    const pageOf = async (url: string) => (await findPaymentPageData(database.prisma, url.slice(url.lastIndexOf('/') + 1)))!.bankAccount;
    // A later change of the account's row does not move where the buyer was told to pay.
    await owner.bankAccount.update({ where: { id: perOrder.order.bank_account_id }, data: { holderName: 'ｶ)ﾍﾞﾂﾒｲ' } });

    const pages = await Promise.all([perOrder, perBuyer, shared].map((created) => pageOf(created.order.payment_url)));

    expect(pages).toEqual([
      {
        bankCode: '0310',
        bankName: 'GMOあおぞらネット銀行',
        branchCode: '101',
        branchName: 'ほうじちゃ支店',
        accountType: 'ordinary',
        accountNumber: perOrder.order.transfer_to.account_number,
        holderName: 'ｶ)ｱｸﾒ',
        dedicated: 'order',
      },
      expect.objectContaining({ accountNumber: perBuyer.order.transfer_to.account_number, dedicated: 'buyer' }),
      expect.objectContaining({ accountNumber: '1000000', dedicated: null }),
    ]);
    expect(shared.order.bank_account_id).toBe(plain);
  });
});
