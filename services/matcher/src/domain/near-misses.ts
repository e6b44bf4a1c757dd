import type { NearMissKind } from '@pmatch/contracts';

/**
 * Amounts payers deduct as the transfer fee (振込手数料) when they pay less than asked: the fees
 * of Japanese banks and the round sums payers use in their own fee tables (docs/guide.md "Near
 * misses", with sources). A payer's deduction need not be their bank's real fee.
 */
export const TRANSFER_FEES: ReadonlySet<number> = new Set([110, 154, 165, 220, 275, 330, 385, 440, 495, 550, 660, 770, 880, 990, 1_100]);

/** Differences up to this many yen, and at most a tenth of the order's amount, are small. */
export const SMALL_DIFFERENCE_MAX = 1_000;

/**
 * What an amount difference (the deposit's amount minus the order's) most likely is: a transfer
 * fee deducted (short by a fee, less than half the order), another small difference, or nothing
 * worth showing (undefined).
 */
export function nearMissKind(difference: number, orderAmount: number): NearMissKind | undefined {
  if (difference === 0) return undefined;
  if (difference < 0 && TRANSFER_FEES.has(-difference) && -difference * 2 < orderAmount) return 'transfer_fee';
  if (Math.abs(difference) <= SMALL_DIFFERENCE_MAX && Math.abs(difference) * 10 <= orderAmount) return 'small_difference';
  return undefined;
}

/** The amounts an order may have to be a near miss of a deposit of `amount`: what `nearMissKind` can name. */
export function nearAmountRange(amount: number): { min: number; max: number } {
  return { min: amount - SMALL_DIFFERENCE_MAX, max: amount + Math.max(SMALL_DIFFERENCE_MAX, ...TRANSFER_FEES) };
}
