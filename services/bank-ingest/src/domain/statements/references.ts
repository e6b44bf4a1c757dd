import { createHash } from 'node:crypto';

/**
 * The canonical bank reference of a Zengin data record, the one an adapter pushing the same deposit
 * computes, so both store one transaction: `zengin:<勘定日 YYYYMMDD>:<照会番号 without leading
 * zeros>:<金額>`, + `:out` for a withdrawal, `:cancel` for a cancellation; without 照会番号, `h` and
 * 16 hex digits of the record's SHA-256 in its place (docs/decisions/0039-canonical-bank-reference.md).
 */
export function zenginReference(record: {
  booked: string;
  reference: string | undefined;
  amount: number;
  raw: Uint8Array;
  direction: 'deposit' | 'withdrawal' | 'cancel';
}): string {
  const id = record.reference === undefined ? `h${createHash('sha256').update(record.raw).digest('hex').slice(0, 16)}` : String(Number(record.reference));
  const suffix = { deposit: '', withdrawal: ':out', cancel: ':cancel' }[record.direction];
  return `zengin:${record.booked.replace(/-/g, '')}:${id}:${record.amount}${suffix}`;
}

/**
 * Tells the k-th record of one account's group with the same reference as an earlier one of the
 * group apart: it gets `#k` (k ≥ 2), so two identical transfers of one day are two transactions,
 * and the same file or an overlapping statement gives every record the same reference again.
 * Cleared at each group (`nextGroup`), so memory is bounded by the largest group; keeps a 48-bit
 * hash per distinct reference, not the references.
 */
export class RepeatCounter {
  private seen = new Map<number, number>();

  nextGroup(): void {
    this.seen = new Map();
  }

  unique(reference: string): string {
    const hash = createHash('sha1').update(reference).digest().readUIntBE(0, 6);
    const count = (this.seen.get(hash) ?? 0) + 1;
    this.seen.set(hash, count);
    return count === 1 ? reference : `${reference}#${count}`;
  }
}

/** 16 hex digits of SHA-256 over what an entry says: its direction (a reversal's, of what it takes back), day, amount, name. */
export function camtValuesHash(credit: boolean, day: string, amount: number, counterparty: string): string {
  return createHash('sha256')
    .update(JSON.stringify([credit ? 'CRDT' : 'DBIT', day, amount, counterparty]))
    .digest('hex')
    .slice(0, 16);
}

/** A camt entry's reference for one of its several details: `/2` for the second. */
export function referenceWithSuffix(reference: string | undefined, suffix: string): string | undefined {
  return reference === undefined ? undefined : `${reference}${suffix}`;
}
