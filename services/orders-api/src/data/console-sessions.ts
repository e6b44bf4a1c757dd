import type { Mode } from '@pmatch/contracts';
import { sha256Of, type ConsoleSessionRow, type PrismaClient, type UserRow } from '@pmatch/db';

export interface NewSession {
  token: string;
  userId: string;
  csrfToken: string;
  mode: Mode;
  secondFactorPending: boolean;
  ip: string | undefined;
}

export async function insertSession(prisma: PrismaClient, session: NewSession, now: Date): Promise<void> {
  await prisma.consoleSession.create({
    data: {
      idHash: sha256Of(session.token),
      userId: session.userId,
      csrfToken: session.csrfToken,
      mode: session.mode,
      secondFactorPending: session.secondFactorPending,
      ip: session.ip ?? null,
      createdAt: now,
      lastSeenAt: now,
    },
  });
}

export async function findSession(prisma: PrismaClient, token: string): Promise<(ConsoleSessionRow & { user: UserRow }) | null> {
  const idHash = sha256Of(token);
  const session = await prisma.consoleSession.findUnique({ where: { idHash } });
  if (session === null) return null;
  const user = await prisma.user.findUnique({ where: { id: session.userId } });
  return user === null ? null : { ...session, user };
}

export async function touchSession(prisma: PrismaClient, token: string, now: Date): Promise<void> {
  await prisma.consoleSession.updateMany({ where: { idHash: sha256Of(token) }, data: { lastSeenAt: now } });
}

export async function setSessionMode(prisma: PrismaClient, token: string, mode: Mode): Promise<void> {
  await prisma.consoleSession.updateMany({ where: { idHash: sha256Of(token) }, data: { mode } });
}

export async function deleteSession(prisma: PrismaClient, token: string): Promise<void> {
  await prisma.consoleSession.deleteMany({ where: { idHash: sha256Of(token) } });
}

/** Every session of a user but the one given (a password or second factor changed). */
export async function deleteOtherSessions(prisma: PrismaClient, userId: string, keepToken: string): Promise<void> {
  await prisma.consoleSession.deleteMany({ where: { userId, idHash: { not: sha256Of(keepToken) } } });
}

/** Sessions idle past `idleBefore` or begun before `startedBefore`: no request can use them any more. */
export async function deleteEndedSessions(prisma: PrismaClient, idleBefore: Date, startedBefore: Date): Promise<number> {
  const deleted = await prisma.consoleSession.deleteMany({ where: { OR: [{ lastSeenAt: { lt: idleBefore } }, { createdAt: { lt: startedBefore } }] } });
  return deleted.count;
}
