import type { NewEvent } from '@pmatch/contracts';
import { recordEvents, type PrismaClient } from '@pmatch/db';
import { usePrismaTestDatabase, waitFor } from '@pmatch/testkit';
import { listEvents, waitForEarlierTransactions } from '../src/data/events';
import type { ApiKeyAuth } from '../src/domain/api-key-auth';

let prisma: PrismaClient;
const at = new Date('2026-11-22T01:02:03.456Z');

usePrismaTestDatabase(undefined, (opened) => ({ prisma } = opened));

let organisations = 0;
async function organisation(): Promise<{ auth: ApiKeyAuth; record: (types: string[]) => Promise<string[]> }> {
  organisations += 1;
  const id = `org_events_${organisations}`;
  await prisma.organisation.create({ data: { id, name: 'n', ownerEmail: 'o@example.com' } });
  const auth: ApiKeyAuth = {
    keyId: 'key_x',
    organisationId: id,
    mode: 'test',
    permission: 'read_write',
    bankAccountId: null,
    accountIds: [],
    keyHash: 'hash_x',
    cached: false,
  };
  const record = (types: string[]) =>
    prisma.$transaction((tx) =>
      recordEvents(
        tx,
        { organisationId: id, mode: 'test', bankAccountId: null, at },
        types.map((type) => ({ type, data: { object: {} } }) as unknown as NewEvent),
      ),
    );
  return { auth, record };
}

/** Every id listed after `cursor`, all pages; without the read-your-writes wait, which tests here hold open on purpose. */
async function idsAfter(auth: ApiKeyAuth, cursor?: string): Promise<string[]> {
  const ids: string[] = [];
  let after = cursor;
  for (;;) {
    const page = await listEvents(prisma, auth, { limit: 2, ...(after === undefined ? {} : { startingAfter: after }) }, 0);
    if (page === undefined) throw new Error(`unknown cursor ${after}`);
    ids.push(...page.rows.map((r) => r.id));
    if (!page.hasMore) return ids;
    after = page.rows.at(-1)!.id;
  }
}

describe('listing events', () => {
  test('when a transaction that began first commits after a later one, then a client paging with the cursor still gets its event', async () => {
    const { auth, record } = await organisation();
    const [first] = await record(['order.created']);
    // The list shows an event once no transaction older than it runs anywhere in the cluster.
    await waitFor(async () => ((await idsAfter(auth)).includes(first!) ? true : undefined), { what: 'the first event to be listed' });
    let commitA!: () => void;
    const gate = new Promise<void>((resolve) => (commitA = resolve));
    let signalInserted!: (ids: string[]) => void;
    const insertedByA = new Promise<string[]>((resolve) => (signalInserted = resolve));
    const transactionA = prisma.$transaction(async (tx) => {
      const ids = await recordEvents(tx, { organisationId: auth.organisationId, mode: 'test', bankAccountId: null, at }, [
        { type: 'order.canceled', data: { object: {} } } as unknown as NewEvent,
      ]);
      signalInserted(ids);
      await gate;
    });
    const [eventOfA] = await insertedByA;
    const [eventOfB] = await record(['order.updated']);

    const seenWhileAIsOpen = await idsAfter(auth);
    commitA();
    await transactionA;
    const cursor = seenWhileAIsOpen.at(-1);
    const seenAfterwards = await waitFor(
      async () => {
        const ids = await idsAfter(auth, cursor);
        return ids.includes(eventOfB!) ? ids : undefined;
      },
      { what: 'the event of B to be listed' },
    );

    expect(seenWhileAIsOpen).toEqual([first]);
    expect(seenAfterwards).toEqual([eventOfA, eventOfB]);
  });

  test('when a transaction older than a committed event is still running, then the list waits for it and then shows the event', async () => {
    const { auth, record } = await organisation();
    let finishOlder!: () => void;
    const gate = new Promise<void>((resolve) => (finishOlder = resolve));
    let signalStarted!: () => void;
    const olderStarted = new Promise<void>((resolve) => (signalStarted = resolve));
    // An unrelated transaction that took its transaction id before the event was recorded.
    const older = prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_current_xact_id()`;
      signalStarted();
      await gate;
    });
    await olderStarted;
    const [event] = await record(['order.created']);

    const hiddenWithoutWaiting = (await listEvents(prisma, auth, { limit: 10 }, 0))!.rows.map((r) => r.id);
    let answered = false;
    const listing = listEvents(prisma, auth, { limit: 10 }, 30_000).finally(() => (answered = true));
    const settledWhileOpen = await waitForEarlierTransactions(prisma, 200);
    const answeredWhileOpen = answered;
    finishOlder();
    await older;
    const listed = (await listing)!.rows.map((r) => r.id);

    expect(hiddenWithoutWaiting).toEqual([]);
    expect(settledWhileOpen).toBe(false);
    expect(answeredWhileOpen).toBe(false);
    expect(listed).toEqual([event]);
  });

  test('when one transaction records several events, then they are listed in the order recorded, across pages', async () => {
    const { auth, record } = await organisation();
    const types = ['transaction.deposited', 'order.paid', 'transaction.held', 'order.expired', 'order.created'];
    const ids = await record(types);

    const listed = await waitFor(
      async () => {
        const all = await idsAfter(auth);
        return all.length === ids.length ? all : undefined;
      },
      { what: 'the events to be listed' },
    );

    expect(listed).toEqual(ids);
  });

  test('when a key is limited to one bank account, then it lists only the events of that account', async () => {
    const { auth } = await organisation();
    for (const id of ['ba_events_a', 'ba_events_b']) {
      await prisma.bankAccount.create({
        data: { id, organisationId: auth.organisationId, mode: 'live', bankCode: '0001', branchCode: '001', accountNumber: id, holderName: 'h' },
      });
    }
    const onAccount = (bankAccountId: string) =>
      prisma.$transaction((tx) =>
        recordEvents(tx, { organisationId: auth.organisationId, mode: 'live', bankAccountId, at }, [
          { type: 'order.created', data: { object: {} } } as unknown as NewEvent,
        ]),
      );
    const [ofA] = await onAccount('ba_events_a');
    const [ofB] = await onAccount('ba_events_b');
    const live = { ...auth, mode: 'live' as const };

    const all = await waitFor(
      async () => {
        const ids = await idsAfter(live);
        return ids.length === 2 ? ids : undefined;
      },
      { what: 'both events to be listed' },
    );

    expect(all).toEqual([ofA, ofB]);
    expect(await idsAfter({ ...live, bankAccountId: 'ba_events_a' })).toEqual([ofA]);
    expect(await idsAfter({ ...live, bankAccountId: 'ba_events_b' })).toEqual([ofB]);
    expect(await listEvents(prisma, { ...live, bankAccountId: 'ba_events_a' }, { limit: 10, startingAfter: ofB! })).toBeUndefined();
  });
});
