import { bankForm as bankFormOfContracts } from './generated/names/bank-form';

/**
 * A name as a bank prints it in a transfer (Zengin): half-width katakana without small kana,
 * upper-case Latin, one space between words, corporate forms abbreviated (株式会社ヤマダ → ｶ)ﾔﾏﾀﾞ).
 * `bankForm('ヤマダ ジロウ')` is `'ﾔﾏﾀﾞ ｼﾞﾛｳ'`. Undefined for a name no bank prints (kanji, most
 * symbols). Send it as an order's `payer_name`: a deposit is confirmed as `exact` only under the
 * very name the order holds; the order's `payer_name_bank_form` is this same form.
 */
export function bankForm(name: string): string | undefined {
  return bankFormOfContracts(name);
}
