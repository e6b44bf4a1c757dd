import type { Db, Tx } from '@pmatch/db';

/** Replaces a person's recovery codes with new ones (their hashes); the old ones stop working. */
export async function replaceRecoveryCodes(tx: Tx, userId: string, hashes: readonly string[], now: Date): Promise<void> {
  await tx.userRecoveryCode.deleteMany({ where: { userId } });
  await tx.userRecoveryCode.createMany({ data: hashes.map((codeHash) => ({ userId, codeHash, createdAt: now })) });
}

/** Spends one unused recovery code; false when there is no such unused code. */
export async function spendRecoveryCode(db: Db, userId: string, codeHash: string, now: Date): Promise<boolean> {
  const spent = await db.userRecoveryCode.updateMany({ where: { userId, codeHash, usedAt: null }, data: { usedAt: now } });
  return spent.count === 1;
}

export async function countUnusedRecoveryCodes(db: Db, userId: string): Promise<number> {
  return db.userRecoveryCode.count({ where: { userId, usedAt: null } });
}

export async function deleteRecoveryCodes(db: Db, userId: string): Promise<void> {
  await db.userRecoveryCode.deleteMany({ where: { userId } });
}
