import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bankForm as bankFormOfTheApi } from '@pmatch/contracts';
import { bankForm } from '../src';

/**
 * The client's `bankForm` is the API's own code, copied at build: it gives every name the form
 * the API shows as an order's `payer_name_bank_form`.
 */

interface Case {
  deposit: string;
  orders: { payer_name: string }[];
}

const corpus = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'services', 'matcher', 'quality', 'corpus.json'), 'utf8')) as Case[];

test('when a name is typed as buyers type it, then bankForm gives what the bank prints, and undefined for a name no bank prints', () => {
  expect(bankForm('ヤマダ ジロウ')).toBe('ﾔﾏﾀﾞ ｼﾞﾛｳ');
  expect(bankForm('やまだ　きょうこ')).toBe('ﾔﾏﾀﾞ ｷﾖｳｺ');
  expect(bankForm('株式会社ヤマダ')).toBe('ｶ)ﾔﾏﾀﾞ');
  expect(bankForm('yamada taro')).toBe('YAMADA TARO');
  expect(bankForm('山田太郎')).toBeUndefined();
});

test('when every payer and depositor name of the matching-quality corpus is written, then the client and the API give the same form', () => {
  const names = [...new Set(corpus.flatMap((c) => [c.deposit, ...c.orders.map((o) => o.payer_name)]))];

  const differing = names.filter((name) => bankForm(name) !== bankFormOfTheApi(name));

  expect(names.length).toBeGreaterThan(300);
  expect(differing).toEqual([]);
});
