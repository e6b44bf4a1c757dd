import { sha256Of, type Db } from '@pmatch/db';

export interface NewDisplay {
  id: string;
  sessionToken: string;
  kind: string;
  sealed: string;
}

export async function insertDisplay(db: Db, display: NewDisplay, now: Date, expiresAt: Date): Promise<void> {
  await db.consoleDisplay.create({
    data: { id: display.id, sessionIdHash: sha256Of(display.sessionToken), kind: display.kind, sealed: display.sealed, createdAt: now, expiresAt },
  });
}

/** Deletes the session's display of this id and kind and resolves with what it held, or null when there is none (read already, expired, another session's). */
export async function takeDisplay(db: Db, id: string, sessionToken: string, kind: string, now: Date): Promise<string | null> {
  const [row] = await db.$queryRaw<{ sealed: string }[]>`
    DELETE FROM console_displays
    WHERE id = ${id} AND session_id_hash = ${sha256Of(sessionToken)} AND kind = ${kind} AND expires_at > ${now}
    RETURNING sealed`;
  return row?.sealed ?? null;
}

/** Displays past their time, never read; the periodic sweep. */
export async function deleteExpiredDisplays(db: Db, now: Date): Promise<number> {
  return (await db.consoleDisplay.deleteMany({ where: { expiresAt: { lte: now } } })).count;
}
