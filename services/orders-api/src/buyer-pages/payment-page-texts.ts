import type { AccountType } from '@pmatch/contracts';
import type { BuyerStatus, PageLanguage } from '../domain/payment-page';
import type { TokyoClock } from '../intl';

export interface PaymentPageTexts {
  /** The name of the language in itself, for the link that switches to it. */
  languageName: string;
  title: string;
  notFoundTitle: string;
  notFoundMessage: string;
  testBanner: string;
  status: Record<BuyerStatus, string>;
  /** Why the buyer must not transfer (again), when the order no longer waits for payment. */
  closedNotice: Record<Exclude<BuyerStatus, 'awaiting_payment'>, string>;
  statusLabel: string;
  itemLabel: string;
  amountLabel: string;
  deadlineLabel: string;
  payeeHeading: string;
  bankLabel: string;
  branchLabel: string;
  accountTypeLabel: string;
  /** Every account this service takes deposits into is an ordinary deposit account. */
  accountTypes: Record<AccountType, string>;
  /** Under the account, when it is a dedicated transfer account: given to this order, or to the buyer for good. */
  dedicatedAccountNote: { order: string; buyer: string };
  accountNumberLabel: string;
  holderLabel: string;
  payerNameHeading: string;
  payerNameInstruction: string;
  /** Under the bank's form of the name, when the merchant wrote it otherwise. */
  payerNameAsGiven: (payerName: string) => string;
  /** What to do when no bank can print the name the order gives (kanji, symbols). */
  unprintablePayerName: string;
  /** How to write the order's transfer code before the name. */
  transferCodeInstruction: string;
  /** In place of the name when no bank can print the order's: the buyer's own account name. */
  yourAccountName: string;
  transferCodeHint: (code: string) => string;
  exactAmountNote: (amount: string) => string;
  statusUpdateNote: string;
  deadline: (jst: TokyoClock) => string;
}

const twoDigits = (n: number): string => String(n).padStart(2, '0');

const JA_WEEKDAYS = ['日', '月', '火', '水', '木', '金', '土'];
const EN_WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const EN_MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export const PAGE_TEXTS: Record<PageLanguage, PaymentPageTexts> = {
  ja: {
    languageName: '日本語',
    title: 'お振込みのご案内',
    notFoundTitle: 'ページが見つかりません',
    notFoundMessage: 'このお支払いページは見つかりませんでした。URL をご確認のうえ、ご注文のお店にお問い合わせください。',
    testBanner: 'テストモード — 実際の入金は発生しません。この口座には振り込まないでください。',
    status: {
      awaiting_payment: 'お支払い待ち',
      payment_received: 'お支払い済み',
      expired: 'お支払い期限切れ',
      canceled: 'キャンセル済み',
    },
    closedNotice: {
      payment_received: 'お支払いを確認しました。ありがとうございます。重ねてお振り込みにならないようご注意ください。',
      expired: 'お支払い期限を過ぎたため、この注文へのお振込みは確認できません。お振り込みの前に、ご注文のお店にお問い合わせください。',
      canceled: 'この注文はキャンセルされました。お振り込みにならないでください。',
    },
    statusLabel: '状態',
    itemLabel: 'ご注文内容',
    amountLabel: 'お振込み金額',
    deadlineLabel: 'お支払い期限',
    payeeHeading: 'お振込み先',
    bankLabel: '金融機関',
    branchLabel: '支店',
    accountTypeLabel: '口座種別',
    accountTypes: { ordinary: '普通', current: '当座', savings: '貯蓄' },
    dedicatedAccountNote: {
      order:
        'この口座はこのご注文専用のお振込み先です。ご依頼人名が違っても、この金額のお振込みでお支払いを確認します。このご注文以外のお支払いには使わないでください。',
      buyer: 'この口座はお客様専用のお振込み先です。次回以降のご注文も、同じ口座にお振り込みいただけます。',
    },
    accountNumberLabel: '口座番号',
    holderLabel: '口座名義',
    payerNameHeading: 'ご依頼人名',
    payerNameInstruction: 'お振り込みの際は、ご依頼人名を必ず次のとおりにしてください（銀行の明細に表示されるとおりの半角カナです）。',
    payerNameAsGiven: (payerName) => `ご注文時のお名前「${payerName}」を、銀行での表示に合わせたものです。`,
    unprintablePayerName:
      'このお名前には銀行の振込名義に使えない文字（漢字など）が含まれているため、お振込みを自動では確認できません。' +
      'ご自身の口座名義（カタカナ）のままお振り込みください。お振込みはお店が確認するまで保留され、確認されるとこのページの状態が「お支払い済み」に変わります。' +
      '確認を早めるため、お振り込みの後にご注文のお店へお振込みの日時と名義をお知らせください。',
    transferCodeInstruction: 'お振り込みの際は、ご依頼人名の前に次の7桁の振込番号を入れてください。番号でご注文が確認されます。',
    yourAccountName: '（口座名義）',
    transferCodeHint: (code) => `番号と名前の間は1文字あけてください。銀行の画面に「振込依頼人番号」の欄があれば、そちらに ${code} を入力しても構いません。`,
    exactAmountNote: (amount) => `${amount} ちょうどをお振り込みください。金額の異なるお振込み、分割や複数のご注文をまとめたお振込みは自動では確認できません。`,
    statusUpdateNote: '入金が確認されると、このページの状態が「お支払い済み」に変わります。',
    deadline: (t) => `${t.year}年${t.month}月${t.day}日（${JA_WEEKDAYS[t.weekday]}）${twoDigits(t.hour)}:${twoDigits(t.minute)}（日本時間）`,
  },
  en: {
    languageName: 'English',
    title: 'How to pay by bank transfer',
    notFoundTitle: 'Page not found',
    notFoundMessage: 'We could not find this payment page. Please check the URL, or ask the shop you ordered from.',
    testBanner: 'TEST MODE — no real money moves. Do not transfer money to this account.',
    status: {
      awaiting_payment: 'Awaiting payment',
      payment_received: 'Payment received',
      expired: 'Expired',
      canceled: 'Canceled',
    },
    closedNotice: {
      payment_received: 'We have received your payment. Thank you. Please do not transfer again.',
      expired: 'The payment deadline has passed, so a transfer for this order can no longer be confirmed. Please ask the shop before you transfer.',
      canceled: 'This order has been canceled. Please do not transfer money for it.',
    },
    statusLabel: 'Status',
    itemLabel: 'Item',
    amountLabel: 'Amount to transfer',
    deadlineLabel: 'Pay by',
    payeeHeading: 'Transfer to',
    bankLabel: 'Bank',
    branchLabel: 'Branch',
    accountTypeLabel: 'Account type',
    accountTypes: { ordinary: 'Ordinary (普通)', current: 'Current (当座)', savings: 'Savings (貯蓄)' },
    dedicatedAccountNote: {
      order:
        'This account is for this order alone: a transfer of this amount to it pays the order, whatever sender name your bank shows. Do not use it for anything else.',
      buyer: 'This account is yours alone: your later orders are paid into the same account.',
    },
    accountNumberLabel: 'Account number',
    holderLabel: 'Account holder',
    payerNameHeading: 'Name to pay under',
    payerNameInstruction: 'When you transfer, enter exactly this as the sender (ご依頼人) name: it is how banks print it, in half-width katakana.',
    payerNameAsGiven: (payerName) => `The name given with your order, “${payerName}”, as a bank prints it.`,
    unprintablePayerName:
      'This name has characters banks cannot print in a transfer (such as kanji), so your payment cannot be confirmed automatically. ' +
      'Transfer under your own account name (in katakana) as usual: the payment is held until the shop confirms it, and this page then shows it as received. ' +
      'To speed this up, tell the shop the date of your transfer and the name it was sent under.',
    transferCodeInstruction: 'When you transfer, put this 7-digit transfer code before the sender (ご依頼人) name: it tells us which order you are paying.',
    yourAccountName: '(your account name)',
    transferCodeHint: (code) =>
      `Leave one space between the code and the name. If your bank has a field for a sender number (振込依頼人番号), you may enter ${code} there instead.`,
    exactAmountNote: (amount) =>
      `Transfer exactly ${amount}. A different amount, a partial payment, or one transfer for several orders cannot be confirmed automatically.`,
    statusUpdateNote: 'Once your payment arrives, the status on this page changes to “Payment received”.',
    deadline: (t) => `${EN_WEEKDAYS[t.weekday]}, ${t.day} ${EN_MONTHS[t.month - 1]} ${t.year}, ${twoDigits(t.hour)}:${twoDigits(t.minute)} (Japan time)`,
  },
};
