import { randomUUID } from 'node:crypto';
import { adapterCredentials, TestSystem } from '@pmatch/testkit';
import { liveAccount, notify } from './support/bank';

let system: TestSystem;

beforeAll(async () => {
  system = await TestSystem.start();
});

afterAll(async () => {
  await system?.stop();
});

const deposit = (fields: Record<string, unknown>) => ({
  bank_reference: `ref-${randomUUID()}`,
  direction: 'deposit',
  amount: 4200,
  counterparty: 'ﾔﾏﾀﾞ ﾀﾛｳ',
  occurred_at: new Date().toISOString(),
  ...fields,
});
const storedOn = async (accountId: string) =>
  (await system.sql<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE bank_account_id = $1', [accountId]))[0]!.n;
/** ADAPTER_CACHE_MS: how long a replica may still use what it read of the adapters. */
const CACHE_MS = 1_000;

describe('adapters bound to accounts', () => {
  test('when adapter A posts a notification for an account bound only to adapter B, then 403 account_not_allowed and nothing is stored', async () => {
    const { orgId } = await system.createMerchant();
    const ofA = await liveAccount(system, orgId, { number: '6100001' });
    const ofB = await liveAccount(system, orgId, { number: '6100002' });
    const a = await system.ops('adapter', 'create', '--name', 'bank-a', '--bank-account', ofA);
    await system.ops('adapter', 'create', '--name', 'bank-b', '--bank-account', ofB);

    const intoB = await notify(system, adapterCredentials(a), deposit({ bank_account_id: ofB }));
    const byIdentity = await notify(
      system,
      adapterCredentials(a),
      deposit({ account: { bank_code: '0001', branch_code: '001', account_type: 'ordinary', account_number: '6100002' } }),
    );
    const nowhere = await notify(system, adapterCredentials(a), deposit({ bank_account_id: 'ba_AAAAAAAAAAAAAAAAAAAAAAAA' }));
    const intoA = await notify(system, adapterCredentials(a), deposit({ bank_account_id: ofA }));

    for (const refused of [intoB, byIdentity, nowhere]) {
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ type: 'permission_error', code: 'account_not_allowed' });
    }
    expect(intoA.status).toBe(202);
    expect(await storedOn(ofB)).toBe(0);
    expect(await system.sql('SELECT adapter_id FROM transactions WHERE id = $1', [intoA.body.transaction_id])).toEqual([{ adapter_id: a.id }]);
  });

  test('when a notification names its account by bank, branch, type and number, then it is stored on that account (and not on one of another type)', async () => {
    const { orgId } = await system.createMerchant();
    const ordinary = await liveAccount(system, orgId, { bank: '0005', branch: '123', number: '6200001' });
    const current = await liveAccount(system, orgId, { bank: '0005', branch: '123', type: 'current', number: '6200001' });
    const adapter = await system.ops('adapter', 'create', '--name', 'bank', '--bank-account', ordinary, '--bank-account', current);

    const res = await notify(
      system,
      adapterCredentials(adapter),
      deposit({ account: { bank_code: '0005', branch_code: '123', account_type: 'current', account_number: '6200001' } }),
    );
    const both = await notify(
      system,
      adapterCredentials(adapter),
      deposit({ bank_account_id: ordinary, account: { bank_code: '0005', branch_code: '123', account_type: 'current', account_number: '6200001' } }),
    );

    expect(res.status).toBe(202);
    expect(await system.sql('SELECT bank_account_id FROM transactions WHERE id = $1', [res.body.transaction_id])).toEqual([{ bank_account_id: current }]);
    expect(await storedOn(ordinary)).toBe(0);
    expect(both.status).toBe(400);
  });

  test('when an account is bound to an adapter, then its next notification is accepted; once unbound or revoked, it is refused within a second', async () => {
    const { orgId } = await system.createMerchant();
    const first = await liveAccount(system, orgId, { number: '6300001' });
    const later = await liveAccount(system, orgId, { number: '6300002' });
    const adapter = await system.ops('adapter', 'create', '--name', 'bank', '--bank-account', first);
    const secret = adapterCredentials(adapter);
    expect((await notify(system, secret, deposit({ bank_account_id: first }))).status).toBe(202);

    await system.ops('adapter', 'bind', '--adapter', String(adapter.id), '--bank-account', later);
    expect((await notify(system, secret, deposit({ bank_account_id: later }))).status).toBe(202);

    await system.ops('adapter', 'unbind', '--adapter', String(adapter.id), '--bank-account', later);
    system.advanceClock(CACHE_MS + 1);
    expect((await notify(system, secret, deposit({ bank_account_id: later }))).status).toBe(403);
    expect((await notify(system, secret, deposit({ bank_account_id: first }))).status).toBe(202);

    await system.ops('adapter', 'revoke', '--adapter', String(adapter.id));
    system.advanceClock(CACHE_MS + 1);
    const revoked = await notify(system, secret, deposit({ bank_account_id: first }));
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.code).toBe('invalid_api_key');
    expect(await storedOn(first)).toBe(2);
  });
});
