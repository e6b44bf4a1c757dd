import type { Mode } from '@pmatch/contracts';
import { sha256Of, type ConsoleSessionRow, type Db, type UserRow } from '@pmatch/db';

export interface NewSession {
  token: string;
  userId: string;
  csrfToken: string;
  mode: Mode;
  secondFactorPending: boolean;
  ip: string | undefined;
}

export async function insertSession(db: Db, session: NewSession, now: Date): Promise<void> {
  await db.consoleSession.create({
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

export async function findSession(db: Db, token: string): Promise<(ConsoleSessionRow & { user: UserRow }) | null> {
  const idHash = sha256Of(token);
  const session = await db.consoleSession.findUnique({ where: { idHash } });
  if (session === null) return null;
  const user = await db.user.findUnique({ where: { id: session.userId } });
  return user === null ? null : { ...session, user };
}

export async function touchSession(db: Db, token: string, now: Date): Promise<void> {
  await db.consoleSession.updateMany({ where: { idHash: sha256Of(token) }, data: { lastSeenAt: now } });
}

export async function setSessionMode(db: Db, token: string, mode: Mode): Promise<void> {
  await db.consoleSession.updateMany({ where: { idHash: sha256Of(token) }, data: { mode } });
}

export async function deleteSession(db: Db, token: string): Promise<void> {
  await db.consoleSession.deleteMany({ where: { idHash: sha256Of(token) } });
}

/** Every session of a user but the one given (a password or second factor changed). */
export async function deleteOtherSessions(db: Db, userId: string, keepToken: string): Promise<void> {
  await db.consoleSession.deleteMany({ where: { userId, idHash: { not: sha256Of(keepToken) } } });
}

/** Sessions idle past `idleBefore` or begun before `startedBefore`: no request can use them any more. */
export async function deleteEndedSessions(db: Db, idleBefore: Date, startedBefore: Date): Promise<number> {
  const deleted = await db.consoleSession.deleteMany({ where: { OR: [{ lastSeenAt: { lt: idleBefore } }, { createdAt: { lt: startedBefore } }] } });
  return deleted.count;
}

/**
 * Takes one try of a log-in's second factor before its code is checked: resolves with the number of
 * tries taken so far, this one included, or null when the session is not waiting for a code or has
 * had its `allowed` tries (parallel tries cannot pass the limit: the row is updated conditionally).
 */
export async function reserveSecondFactorTry(db: Db, token: string, allowed: number): Promise<number | null> {
  const [row] = await db.$queryRaw<{ failures: number }[]>`
    UPDATE console_sessions SET second_factor_failures = second_factor_failures + 1
    WHERE id_hash = ${sha256Of(token)} AND second_factor_pending AND second_factor_failures < ${allowed}
    RETURNING second_factor_failures AS failures`;
  return row?.failures ?? null;
}
