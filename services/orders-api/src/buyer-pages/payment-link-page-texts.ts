import { LIMITS, type PaymentLinkStatus } from '@pmatch/contracts';
import type { PageLanguage } from '../domain/payment-page';

/** What a payment link's page says, in each language of the payment page. */
export interface PaymentLinkPageTexts {
  title: string;
  availableUntilLabel: string;
  nameLabel: string;
  nameHint: string;
  next: string;
  previewHeading: string;
  previewInstruction: string;
  confirm: string;
  edit: string;
  emptyName: string;
  tooLongName: string;
  /** The characters of the name no bank prints, quoted. */
  unprintableName: (characters: string) => string;
  /** The same, when no one character is to blame (the name as a whole is not printable). */
  unprintableNameGeneric: string;
  /** Why the link takes no order now. */
  closed: Record<Exclude<PaymentLinkStatus, 'active'>, string>;
  tooManyOrders: string;
}

export const LINK_PAGE_TEXTS: Record<PageLanguage, PaymentLinkPageTexts> = {
  ja: {
    title: 'ご注文',
    availableUntilLabel: '受付期限',
    nameLabel: 'お振込みの名義（ご依頼人名）',
    nameHint: 'お振り込みに使う口座の名義を、カタカナかひらがなで入力してください（例: ヤマダ タロウ）。英字も使えます。',
    next: '確認へ進む',
    previewHeading: '銀行での表示',
    previewInstruction: 'お振込みの明細には、お名前が次のように表示されます。この名義でお振り込みください。',
    confirm: 'この名義で注文する',
    edit: '名義を直す',
    emptyName: 'お振込みの名義を入力してください。',
    tooLongName: `お名前は${LIMITS.payerNameMax}文字以内で入力してください。`,
    unprintableName: (characters) => `${characters} は銀行の振込名義に使えない文字です。漢字や記号は使わず、カタカナ・ひらがな・英字で入力してください。`,
    unprintableNameGeneric: 'このお名前は銀行の振込名義に使えません。カタカナ・ひらがな・英字で入力してください。',
    closed: {
      deactivated: 'このリンクは現在ご利用いただけません。ご注文については、お店にお問い合わせください。',
      used_up: 'このリンクは受付数に達したため、ご注文いただけません。',
      expired: 'このリンクの受付期限を過ぎたため、ご注文いただけません。',
    },
    tooManyOrders: 'ご注文の回数が多すぎます。しばらく時間をおいてから、もう一度お試しください。',
  },
  en: {
    title: 'Order',
    availableUntilLabel: 'Open until',
    nameLabel: 'Name you will transfer under (ご依頼人名)',
    nameHint: 'The name on the account you will transfer from, in katakana or hiragana (for example ヤマダ タロウ). Latin letters work too.',
    next: 'Continue',
    previewHeading: 'How your bank will show it',
    previewInstruction: 'Your transfer will carry your name like this. Transfer under exactly this name.',
    confirm: 'Order under this name',
    edit: 'Change the name',
    emptyName: 'Enter the name you will transfer under.',
    tooLongName: `The name may be at most ${LIMITS.payerNameMax} characters long.`,
    unprintableName: (characters) =>
      `Banks cannot print ${characters} in the name of a transfer. Write the name in katakana, hiragana or Latin letters, without kanji or symbols.`,
    unprintableNameGeneric: 'Banks cannot print this name in a transfer. Write it in katakana, hiragana or Latin letters.',
    closed: {
      deactivated: 'This link can no longer be used. Please ask the shop about your order.',
      used_up: 'This link has taken all the orders it can.',
      expired: 'This link has closed: its ordering period is over.',
    },
    tooManyOrders: 'Too many orders from your connection. Please wait a while and try again.',
  },
};
