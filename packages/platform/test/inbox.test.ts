import type { PrismaClient } from '@pmatch/db';
import { usePrismaTestDatabase } from '@pmatch/testkit';
import { INBOX_RETENTION_MS, claimMessage, forgetProcessedMessages } from '../src';

/** A consumer remembers processed messages for 30 days, then forgets only its own. */

const DAY = 24 * 3600_000;
const now = new Date('2026-11-22T12:00:00Z');
let prisma: PrismaClient;

usePrismaTestDatabase(undefined, (opened) => ({ prisma } = opened));

const processedDaysAgo = (consumer: string, messageId: string, days: number) =>
  prisma.inbox.create({ data: { consumer, messageId, processedAt: new Date(now.getTime() - days * DAY) } });

test("when the inbox is swept, then its consumers' messages older than 30 days are forgotten and everything else is kept", async () => {
  await processedDaysAgo('matcher.deposits', 'old', 31);
  await processedDaysAgo('matcher.commands', 'old', 30.5);
  await processedDaysAgo('matcher.deposits', 'recent', 29);
  await processedDaysAgo('webhook-dispatcher.events', 'old', 31);

  const forgotten = await forgetProcessedMessages(prisma, ['matcher.deposits', 'matcher.commands'], now);

  expect(INBOX_RETENTION_MS).toBe(30 * DAY);
  expect(forgotten).toBe(2);
  const left = await prisma.inbox.findMany({ orderBy: [{ consumer: 'asc' }, { messageId: 'asc' }], select: { consumer: true, messageId: true } });
  expect(left).toEqual([
    { consumer: 'matcher.deposits', messageId: 'recent' },
    { consumer: 'webhook-dispatcher.events', messageId: 'old' },
  ]);
});

test('when a message is claimed again within its 30 days, then the inbox still knows it', async () => {
  expect(await claimMessage(prisma, 'matcher.late-orders', 'm-1')).toBe(true);
  await forgetProcessedMessages(prisma, ['matcher.late-orders'], new Date(Date.now() + 29 * DAY));

  expect(await claimMessage(prisma, 'matcher.late-orders', 'm-1')).toBe(false);
});
