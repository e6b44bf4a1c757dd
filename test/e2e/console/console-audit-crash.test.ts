import { TestSystem, waitFor, type MerchantClient } from '@pmatch/testkit';
import { ConsoleSession, PASSWORD, addPerson } from './support';

/**
 * A console action and its audit row are written together: the service writing them (orders-api
 * for its own actions, the matcher for decisions) is killed (SIGKILL) while the action waits to
 * write its audit row, and afterwards neither the action nor the row exists. The audit row is held
 * back by a lock on audit_log that this test takes, so the kill lands exactly between the two writes.
 */

let system: TestSystem;
let merchant: MerchantClient;
let operator: ConsoleSession;

beforeAll(async () => {
  // A request the matcher does not answer is given up after five seconds (the default is ten), and
  // the account lock of a killed matcher lapses after one (the default is fifteen).
  system = await TestSystem.start({ COMMAND_TIMEOUT_MS: '5000', LOCK_TTL_MS: '1000' });
  const created = await system.createMerchant({ name: 'クラッシュ商店' });
  merchant = created.client;
  const person = await addPerson(system, created.orgId, 'operator');
  operator = await ConsoleSession.logIn(system.apiUrl, person.email, PASSWORD);
});

afterAll(async () => {
  await system?.stop();
});

/** Holds every insert into audit_log until released; `killBetween` kills `service` once its insert is waiting for it. */
async function holdAuditRows(service: 'orders-api' | 'matcher' = 'orders-api'): Promise<{ killBetween: () => Promise<void> }> {
  const client = await system.sqlSession();
  await client.query('BEGIN');
  await client.query('LOCK TABLE audit_log IN SHARE MODE');
  return {
    killBetween: async () => {
      try {
        await waitFor(
          async () =>
            Number(
              (
                await system.sql<{ n: string }>(
                  `SELECT count(*) AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'audit_log' AND NOT l.granted`,
                )
              )[0]!.n,
            ) > 0 || undefined,
          { what: 'an audit row waiting to be written' },
        );
        await system.kill(service);
      } finally {
        await client.query('ROLLBACK');
        await client.close();
      }
    },
  };
}

const auditRowsOf = async (objectId: string) =>
  (await system.sql<{ action: string; detail: { outcome?: string } }>('SELECT action, detail FROM audit_log WHERE object_id = $1 ORDER BY id', [objectId])).map(
    (r) => `${r.action}${r.detail.outcome === undefined ? '' : `:${r.detail.outcome}`}`,
  );

const statusOf = async (orderId: string) => (await system.sql<{ status: string }>('SELECT status FROM orders WHERE id = $1', [orderId]))[0]!.status;

async function restart(service: 'orders-api' | 'matcher'): Promise<void> {
  await system.startService(service);
  await system.ready();
}

test('when orders-api dies between canceling an order and writing its audit row, then the order is still open and no row was written; done again, both are', async () => {
  const order = await merchant.createOrder({ amount: 4321, payer_name: 'ｷｬﾝｾﾙ ﾀﾛｳ' });
  const held = await holdAuditRows();

  const answer = operator.post(`/dashboard/orders/${order.id}/cancel`).catch((error: unknown) => error);
  await held.killBetween();
  expect(String(await answer)).toMatch(/fetch failed/);

  expect(await statusOf(order.id)).toBe('open');
  expect(await auditRowsOf(order.id)).toEqual([]);
  expect(await system.sql(`SELECT id FROM events WHERE type = 'order.canceled' AND data #>> '{object,id}' = $1`, [order.id])).toEqual([]);

  await restart('orders-api');
  expect((await operator.post(`/dashboard/orders/${order.id}/cancel`)).status).toBe(303);
  expect(await statusOf(order.id)).toBe('canceled');
  expect(await auditRowsOf(order.id)).toEqual(['order.cancel']);
});

test('when the matcher dies while the audit row of a reversal it decided waits, then the payment stands and no row was written; done again, the reversal and its one row are', async () => {
  const order = await merchant.createOrder({ amount: 6543, payer_name: 'ﾘﾊﾞｰｽ ﾊﾅｺ' });
  expect((await merchant.deposit(6543, 'ﾘﾊﾞｰｽ ﾊﾅｺ')).status).toBe('confirmed');
  const held = await holdAuditRows('matcher');

  const answer = operator.post(`/dashboard/orders/${order.id}/reverse`, { reason: '返金のため' });
  await held.killBetween();
  // orders-api, unanswered, says so in the audit log: the order's own history tells what happened.
  expect((await answer).status).toBe(503);

  expect(await statusOf(order.id)).toBe('paid');
  expect(await system.sql(`SELECT id FROM events WHERE type = 'order.payment_reversed' AND data #>> '{object,id}' = $1`, [order.id])).toEqual([]);
  expect(await auditRowsOf(order.id)).toEqual(['order.reverse:unknown']);

  await restart('matcher');
  expect((await operator.post(`/dashboard/orders/${order.id}/reverse`, { reason: '返金のため' })).status).toBe(303);
  expect(await statusOf(order.id)).toBe('open');
  expect(await auditRowsOf(order.id)).toEqual(['order.reverse:unknown', 'order.reverse:done']);
});
