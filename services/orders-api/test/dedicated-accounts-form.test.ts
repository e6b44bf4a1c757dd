import { readDedicatedAccountsForm, type DedicatedAccountsForm } from '../src/domain/dedicated-accounts';

const FORM: DedicatedAccountsForm = {
  bank_code: '0005',
  bank_name: '三菱ＵＦＪ銀行',
  branch_code: '123',
  branch_name: '渋谷支店',
  account_type: 'ordinary',
  holder_name: 'ｶ)ｱｸﾒ',
  first_number: '',
  count: '',
  numbers: '',
};

const problemsOf = (form: Partial<DedicatedAccountsForm>) => {
  const read = readDedicatedAccountsForm({ ...FORM, ...form });
  return read.ok ? [] : read.problems;
};

test('when a first number and a count are given, then that many consecutive 7-digit numbers are asked for', () => {
  expect(readDedicatedAccountsForm({ ...FORM, first_number: '0009998', count: '3' })).toEqual({
    ok: true,
    addition: {
      bankCode: '0005',
      bankName: '三菱ＵＦＪ銀行',
      branchCode: '123',
      branchName: '渋谷支店',
      accountType: 'ordinary',
      holderName: 'ｶ)ｱｸﾒ',
      accountNumbers: ['0009998', '0009999', '0010000'],
    },
  });
});

test('when a list is given, then its numbers are asked for in its order, blank lines skipped', () => {
  const read = readDedicatedAccountsForm({ ...FORM, numbers: '7000005\r\n\r\n 7000001 \r\n' });
  expect(read.ok && read.addition.accountNumbers).toEqual(['7000005', '7000001']);
});

test.each([
  ['no numbers', {}, [{ problem: 'numbers_missing' }]],
  ['both ways', { first_number: '1000000', numbers: '1000001' }, [{ problem: 'numbers_both' }]],
  ['a count of 0', { first_number: '1000000', count: '0' }, [{ problem: 'count' }]],
  ['a count over the maximum', { first_number: '1000000', count: '10001' }, [{ problem: 'count' }]],
  ['numbers past 9999999', { first_number: '9999998', count: '3' }, [{ problem: 'past_last_number' }]],
  ['a short first number', { first_number: '123456', count: '2' }, [{ problem: 'first_number' }]],
  ['a bad line', { numbers: '1000001\n1000002\n100003' }, [{ problem: 'numbers_line', line: 3 }]],
  ['a repeated number', { numbers: '1000001\n1000001' }, [{ problem: 'numbers_repeat' }]],
  ['a list too long', { numbers: Array.from({ length: 4001 }, (_, i) => String(1000000 + i)).join('\n') }, [{ problem: 'numbers_too_many' }]],
  ['a holder name in full-width kana', { holder_name: 'アクメ', first_number: '1000000' }, [{ problem: 'holder_name' }]],
  [
    'a 3-digit bank code and no branch name',
    { bank_code: '005', branch_name: ' ', first_number: '1000000' },
    [{ problem: 'bank_code' }, { problem: 'branch_name' }],
  ],
  ['an unknown account type', { account_type: 'checking', first_number: '1000000' }, [{ problem: 'account_type' }]],
])('when the form has %s, then it is refused saying so', (_, form, problems) => {
  expect(problemsOf(form)).toEqual(problems);
});
