import { normaliseName } from '@pmatch/contracts';
import { withoutDecoration } from './rules';

/**
 * The form a depositor name is remembered and looked up by: its kana_width form without what banks
 * and payers put around a name (sender codes, transfer codes, member numbers, フリコミ), so one
 * payer is one key however a code in front of the name changes. Empty for a name of digits only.
 */
export function depositorKey(depositorName: string): string {
  return withoutDecoration(normaliseName(depositorName));
}

/** The form a payer name is remembered by: its kana_width form. */
export function payerKey(payerName: string): string {
  return normaliseName(payerName);
}

/** One payer a person taught: a depositor name paying for a payer name (on the account being decided). */
export interface TaughtPayer {
  depositorKey: string;
  payerKey: string;
}

/** The payers people taught on one bank account, as a decision asks about them. */
export class PayerMemory {
  private readonly pairs: ReadonlySet<string>;

  constructor(taught: Iterable<TaughtPayer>) {
    this.pairs = new Set([...taught].map((t) => `${t.depositorKey}\u0000${t.payerKey}`));
  }

  /** Whether a person taught that this depositor name pays for this payer name. */
  taught(depositorName: string, payerName: string): boolean {
    if (this.pairs.size === 0) return false;
    const key = depositorKey(depositorName);
    return key !== '' && this.pairs.has(`${key}\u0000${payerKey(payerName)}`);
  }
}

export const NO_PAYERS_TAUGHT = new PayerMemory([]);
