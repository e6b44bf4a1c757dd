import { labels } from './labels';
/** The words of an order's dedicated transfer account, as the order page shows it. */
export const transferToJa = {
  transferTo: {
    heading: '専用の振込先口座',
    intro: 'この注文のお支払いページに表示される振込先です。この口座へのこの金額の入金は、名義が違ってもこの注文の支払いとして扱えます（ルール「専用口座」）。',
    bank: '金融機関',
    branch: '支店',
    accountType: '口座種別',
    accountTypes: labels({ ordinary: '普通', current: '当座', savings: '貯蓄' }),
    accountNumber: '口座番号',
    holderName: '口座名義',
    givenTo: '割り当て',
    givenToOrder: 'この注文専用（期限型）',
    givenToBuyer: (reference: string) => `お客さま専用（継続型、顧客番号 ${reference}）`,
  },
};

export const transferToEn: typeof transferToJa = {
  transferTo: {
    heading: 'Dedicated transfer account',
    intro:
      "The account this order's payment page tells the buyer to pay into. A deposit of the amount into it may pay this order whatever the name (rule “Dedicated accounts”).",
    bank: 'Bank',
    branch: 'Branch',
    accountType: 'Account type',
    accountTypes: { ordinary: 'Ordinary (普通)', current: 'Current (当座)', savings: 'Savings (貯蓄)' },
    accountNumber: 'Account number',
    holderName: 'Account holder',
    givenTo: 'Given to',
    givenToOrder: 'This order alone (per order)',
    givenToBuyer: (reference: string) => `The buyer for good (customer reference ${reference})`,
  },
};
