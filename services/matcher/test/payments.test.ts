import { AppError, type Payment } from '@pmatch/contracts';
import { AUTOMATIC, assertReversible, decidedBy } from '../src/domain/payments';

const CONFIRMED_AT = '2026-11-27T00:00:00.000Z';
const paid = (): { status: string; payment: Payment } => ({
  status: 'paid',
  payment: {
    transaction_id: 'txn_000000000000',
    amount: 500,
    counterparty: 'c',
    occurred_at: CONFIRMED_AT,
    matched_at: CONFIRMED_AT,
    decided_by: 'auto',
    trigger: 'auto',
    reason: 'exact',
  },
});
const hoursAfter = (hours: number) => new Date(Date.parse(CONFIRMED_AT) + hours * 60 * 60 * 1000);
const refusal = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return error instanceof AppError ? error.code : String(error);
  }
};

describe('who a payment records as deciding', () => {
  test('when the matcher decides, then decided_by and trigger are auto', () => {
    expect(AUTOMATIC('exact')).toEqual({ decidedBy: 'auto', trigger: 'auto', reason: 'exact' });
  });

  test.each([
    [
      { decided_by: 'api_key:key_abc', trigger: 'api' as const },
      { decidedBy: 'api_key:key_abc', trigger: 'api' },
    ],
    [
      { decided_by: 'user:usr_abc', trigger: 'dashboard' as const },
      { decidedBy: 'user:usr_abc', trigger: 'dashboard' },
    ],
    [
      { decided_by: undefined, trigger: 'api' as const },
      { decidedBy: 'api', trigger: 'api' },
    ],
    [{ trigger: 'shop' as const }, { decidedBy: 'shop', trigger: 'shop' }],
  ])('when a command says %j, then the payment records %j', (command, recorded) => {
    expect(decidedBy(command)).toEqual({ ...recorded, reason: 'manual' });
  });
});

describe('reversal window', () => {
  test('when 23 hours have passed, then the API and the console may reverse, without a reason', () => {
    expect(refusal(() => assertReversible(paid(), hoursAfter(23), { trigger: 'api' }))).toBeUndefined();
    expect(refusal(() => assertReversible(paid(), hoursAfter(23), { trigger: 'dashboard' }))).toBeUndefined();
  });

  test('when 25 hours have passed, then the API is refused with reverse_window_passed, the console without a reason is refused, and the console with one may', () => {
    expect(refusal(() => assertReversible(paid(), hoursAfter(25), { trigger: 'api', reason: 'the buyer asked' }))).toBe('reverse_window_passed');
    expect(refusal(() => assertReversible(paid(), hoursAfter(25), { trigger: 'dashboard' }))).toBe('parameter_missing');
    expect(refusal(() => assertReversible(paid(), hoursAfter(25), { trigger: 'dashboard', reason: 'the buyer asked' }))).toBeUndefined();
  });
});
