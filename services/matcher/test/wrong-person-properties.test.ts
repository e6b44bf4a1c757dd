import { NAME_RULES, bankForm, normaliseName, withoutCorporateForms } from '@pmatch/contracts';
import fc from 'fast-check';
import { decide, type CandidateOrder } from '../src/domain/decide';
import { nameMatcher } from '../src/domain/names/matcher';
import { BANK_NAME_FIELD_LENGTHS, halfWidthLength, withoutDecoration } from '../src/domain/names/rules';
import { loadCorpus } from '../src/quality/corpus';

/**
 * For two distinct names A and B, a deposit written as a bank writes A (sender code, フリコミ, a
 * trailing number, a cut at the field's length) is never confirmed to an order for B, unless a rule
 * says they are the same: equal once corporate forms are removed, or B begins with what a real cut
 * left of A.
 */

const RUNS = { numRuns: 3000 };
const FIELD_LENGTHS = [48, 37, 26] as const;

const identity = (name: string): string => withoutCorporateForms(normaliseName(name));

/**
 * Realistic names a bank can print: every payer and depositor name of the matching-quality corpus,
 * but for the ones a bank already decorated (digits, フリコミ) or cut (a field's length): those are
 * written here.
 */
const NAMES = [...new Set(loadCorpus().flatMap((c) => [c.deposit, ...c.orders.map((o) => o.payer_name)]))].filter(
  (name) =>
    bankForm(name) !== undefined &&
    identity(name) !== '' &&
    !/[0-9０-９]|ﾌﾘｺﾐ|フリコミ|振込/u.test(name) &&
    !BANK_NAME_FIELD_LENGTHS.has(halfWidthLength(name)!),
);
/** Names that begin like each other (a family name, the start of a company's): where mistakes hide. */
const NEIGHBOURS = new Map(NAMES.map((a) => [a, NAMES.filter((b) => b !== a && identity(b).slice(0, 3) === identity(a).slice(0, 3))]));
const nameAndNeighbour = fc
  .constantFrom(...NAMES.filter((a) => NEIGHBOURS.get(a)!.length > 0))
  .chain((a) => fc.tuple(fc.constant(a), fc.constantFrom(...NEIGHBOURS.get(a)!)));
const twoNames = fc.oneof(nameAndNeighbour, fc.tuple(fc.constantFrom(...NAMES), fc.constantFrom(...NAMES)));

interface Writing {
  code: string | undefined;
  furikomi: boolean;
  tail: string | undefined;
  field: (typeof FIELD_LENGTHS)[number];
}

const writing: fc.Arbitrary<Writing> = fc.record({
  code: fc.option(fc.stringMatching(/^[0-9]{4,10}$/), { nil: undefined }),
  furikomi: fc.boolean(),
  tail: fc.option(fc.stringMatching(/^[0-9]{2,8}$/), { nil: undefined }),
  field: fc.constantFrom(...FIELD_LENGTHS),
});

/** A name as a bank writes it into a deposit, and what a cut at the field's end left of it (if one fell). */
function asBankWrites(name: string, w: Writing): { text: string; cutAt: string | undefined } {
  const whole = [w.code, w.furikomi ? 'ﾌﾘｺﾐ' : undefined, bankForm(name)!, w.tail].filter((part) => part !== undefined).join(' ');
  if (whole.length <= w.field) return { text: whole, cutAt: undefined };
  const text = whole.slice(0, w.field);
  return { text, cutAt: identity(withoutDecoration(normaliseName(text))) };
}

const order = (id: string, payerName: string): CandidateOrder => ({
  id,
  status: 'open',
  payerName,
  orderedAt: new Date('2026-11-26T00:00:00Z'),
  expiresAt: new Date('2026-12-10T00:00:00Z'),
});
const at = { amount: 5000, occurredAt: new Date('2026-11-27T01:00:00Z') };
const now = new Date('2026-11-27T03:00:00Z');

describe('no rule makes two people one (properties)', () => {
  test('when the names are taken from the corpus, then there are hundreds, and most have neighbours', () => {
    expect(NAMES.length).toBeGreaterThanOrEqual(300);
    expect(NAMES.filter((a) => NEIGHBOURS.get(a)!.length > 0).length).toBeGreaterThanOrEqual(150);
  });

  test('when a deposit is written as a bank writes A, then it is never confirmed to an order for another name B', () => {
    fc.assert(
      fc.property(
        twoNames,
        fc.option(fc.constantFrom(...NAMES), { nil: undefined }),
        fc.boolean(),
        writing,
        fc.subarray([...NAME_RULES]),
        ([a, b], c, withA, w, rules) => {
          const deposit = asBankWrites(a, w);
          const others = [b, c].filter((name): name is string => name !== undefined && identity(name) !== identity(a));
          const orders = others.map((name, i) => order(`ord_other_${i}`, name));
          if (withA) orders.push(order('ord_a', a));
          const decision = decide({ ...at, counterparty: deposit.text }, orders, nameMatcher(rules), now);
          if (decision.outcome !== 'confirmed' || decision.orderId === 'ord_a') return;
          const confirmed = orders.find((o) => o.id === decision.orderId)!;
          const explicitlyEquated =
            deposit.cutAt !== undefined && deposit.cutAt.length >= 6 && identity(confirmed.payerName).startsWith(deposit.cutAt.slice(0, -1));
          expect({ deposit: deposit.text, confirmed: confirmed.payerName, explicitlyEquated }).toMatchObject({ explicitlyEquated: true });
        },
      ),
      RUNS,
    );
  });

  test('when only A has an order among names unlike it and every rule is on, then a deposit written as the bank writes A confirms it', () => {
    fc.assert(
      fc.property(fc.constantFrom(...NAMES), fc.array(fc.constantFrom(...NAMES), { maxLength: 3 }), writing, (a, others, w) => {
        const deposit = asBankWrites(a, w);
        // A cut that fell on a space (trimmed: no field length) or left under 6 characters of the name says too little.
        if (deposit.cutAt !== undefined && (halfWidthLength(deposit.text) !== w.field || [...deposit.cutAt].length < 6)) return;
        const rivals = others.filter((name) => !identity(name).startsWith(identity(a).slice(0, 6)) && !identity(a).startsWith(identity(name).slice(0, 6)));
        const orders = [...rivals.map((name, i) => order(`ord_other_${i}`, name)), order('ord_a', a)];
        expect(decide({ ...at, counterparty: deposit.text }, orders, nameMatcher(NAME_RULES), now)).toMatchObject({
          outcome: 'confirmed',
          orderId: 'ord_a',
        });
      }),
      RUNS,
    );
  });
});
