import fc from 'fast-check';
import { NAME_CORPUS } from '../fixtures/names-corpus';

/** The minute of the deposit every generated scenario is placed around. */
export const OCCURRED_AT = new Date('2026-11-22T09:00:00Z').getTime();
export const MINUTE = 60_000;

/** Names that fit each other in many ways: every depositor and payer name of the corpus. */
export const CORPUS_NAMES = [...new Set(NAME_CORPUS.flatMap((c) => [c.depositor, c.payer]))];

/** Three amounts: deposits and orders collide often, and an amount off by one yen is among them. */
export const amount = fc.constantFrom(1000, 5000, 5001);

/**
 * An order near a generated deposit: on its account or a second one, of one of `amount`, in any
 * stored status, paid by its own payer, by the depositor or by any corpus name, placed before or
 * after the deposit and open for up to two weeks.
 */
export const nearbyOrder = fc.record({
  onSecondAccount: fc.boolean(),
  amount,
  status: fc.constantFrom('open', 'open', 'expired', 'paid', 'canceled'),
  payerName: fc.oneof(fc.constant('own payer'), fc.constant('depositor'), fc.constantFrom(...CORPUS_NAMES)),
  orderedMinutesBefore: fc.integer({ min: -24 * 60, max: 10 * 24 * 60 }),
  openForMinutes: fc.integer({ min: 0, max: 14 * 24 * 60 }),
});

export type NearbyOrder = typeof nearbyOrder extends fc.Arbitrary<infer O> ? O : never;

/** A generated order's payer name and times, for the corpus case the deposit is written from. */
export function placed(order: NearbyOrder, nameCase: { payer: string; depositor: string }): { payerName: string; orderedAt: Date; expiresAt: Date } {
  const orderedAt = new Date(OCCURRED_AT - order.orderedMinutesBefore * MINUTE);
  return {
    payerName: order.payerName === 'own payer' ? nameCase.payer : order.payerName === 'depositor' ? nameCase.depositor : order.payerName,
    orderedAt,
    expiresAt: new Date(orderedAt.getTime() + order.openForMinutes * MINUTE),
  };
}
