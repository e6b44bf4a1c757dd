import { createHash } from 'node:crypto';
import { ORDER_STATUSES, bankForm, type OrderStatus } from '@pmatch/contracts';
import { PAGE_LANGUAGES, PAGE_TEXTS, type BuyerStatus, type PageLanguage, type PaymentPageTexts, type TokyoDateTime } from './payment-page-texts';

/** The page's address carries the order's payment token: 32 base62 characters from a CSPRNG. */

/** The order as the buyer's page needs it (a subset of the order row). */
export interface PaymentPageOrder {
  status: string;
  mode: string;
  amount: bigint;
  itemName: string;
  payerName: string;
  expiresAt: Date;
}

/** The account the buyer transfers into (a subset of the bank account row). */
export interface PaymentPageBankAccount {
  bankCode: string;
  bankName: string | null;
  branchCode: string;
  branchName: string | null;
  accountNumber: string;
  holderName: string;
}

/**
 * The order's status as the buyer should read it at `now`. An open order past its deadline is
 * expired already: matching treats it so at decision time, even before the sweeper records it.
 */
export function buyerStatusOf(order: Pick<PaymentPageOrder, 'status' | 'expiresAt'>, now: Date): BuyerStatus {
  const status = orderStatusOf(order.status);
  switch (status) {
    case 'open':
      return now.getTime() > order.expiresAt.getTime() ? 'expired' : 'awaiting_payment';
    case 'paid':
    case 'paid_outside':
      return 'payment_received';
    case 'expired':
      return 'expired';
    case 'canceled':
      return 'canceled';
  }
}

function orderStatusOf(status: string): OrderStatus {
  if (!ORDER_STATUSES.includes(status as OrderStatus)) throw new Error(`order has unknown status ${status}`);
  return status as OrderStatus;
}

/** Whole yen with thousands separators: 12800n -> "¥12,800". Order amounts are never negative. */
export function formatYen(amount: bigint): string {
  return `¥${amount.toString().replace(/\B(?=(\d{3})+$)/g, ',')}`;
}

/** Japan has kept UTC+9 all year since 1951, so a fixed offset is Asia/Tokyo time. */
const TOKYO_OFFSET_MS = 9 * 60 * 60 * 1000;

/**
 * The moment on a clock in Japan, to the minute. Seconds are cut off rather than rounded, so the
 * deadline shown is never later than the real one.
 */
export function tokyoDateTimeOf(at: Date): TokyoDateTime {
  const shifted = new Date(at.getTime() + TOKYO_OFFSET_MS);
  return {
    year: shifted.getUTCFullYear(),
    month: shifted.getUTCMonth() + 1,
    day: shifted.getUTCDate(),
    weekday: shifted.getUTCDay(),
    hour: shifted.getUTCHours(),
    minute: shifted.getUTCMinutes(),
  };
}

/** Markup that is already safe: every value that went into it was escaped. */
export class Html {
  constructor(readonly markup: string) {}
}

export type HtmlValue = string | Html | readonly Html[] | null;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/**
 * The only way markup is built here: every interpolated string is escaped, so a payer or item
 * name such as `<script>` can only ever appear as text. null renders nothing.
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let markup = strings[0]!;
  values.forEach((value, i) => {
    markup += toMarkup(value) + strings[i + 1]!;
  });
  return new Html(markup);
}

function toMarkup(value: HtmlValue): string {
  if (value === null) return '';
  if (value instanceof Html) return value.markup;
  if (typeof value === 'string') return escapeHtml(value);
  return value.map((part) => part.markup).join('');
}

const PAGE_STYLE = `
:root { color-scheme: light; --ink: #1f2933; --muted: #52606d; --line: #d9e2ec; --accent: #0b4f8a; }
* { box-sizing: border-box; }
body { margin: 0; background: #f5f7fa; color: var(--ink); line-height: 1.6; -webkit-text-size-adjust: 100%;
  font-family: system-ui, -apple-system, "Hiragino Sans", "Hiragino Kaku Gothic ProN", "Noto Sans JP", "IPAGothic", Meiryo, sans-serif; }
main { max-width: 34rem; margin: 0 auto; padding: 1rem; }
.test-banner { margin: 0; padding: .75rem 1rem; text-align: center; font-weight: 700; color: #3d2a00; border-bottom: 3px solid #b7791f;
  background: repeating-linear-gradient(-45deg, #fde68a 0 12px, #fcd34d 12px 24px); }
header { display: flex; align-items: baseline; justify-content: space-between; gap: 1rem; flex-wrap: wrap; }
h1 { font-size: 1.35rem; margin: .5rem 0; }
h2 { font-size: 1.05rem; margin: 0 0 .5rem; color: var(--accent); }
a { color: var(--accent); }
section { background: #fff; border: 1px solid var(--line); border-radius: .75rem; padding: 1rem; margin: 1rem 0; }
section > :first-child { margin-top: 0; }
section > :last-child { margin-bottom: 0; }
dl { display: grid; grid-template-columns: minmax(6.5rem, max-content) 1fr; align-items: baseline; gap: .5rem 1rem; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
.amount { font-size: 1.6rem; line-height: 1.2; }
.code { color: var(--muted); font-weight: 400; }
.account-number { font-size: 1.25rem; letter-spacing: .08em; font-variant-numeric: tabular-nums; }
.payer-name { font-size: 1.4rem; font-weight: 700; margin: .25rem 0 0; overflow-wrap: anywhere; }
.status { display: inline-block; padding: .1rem .6rem; border-radius: 999px; font-weight: 700; }
.status-awaiting_payment { background: #e0ecff; color: #0b4f8a; }
.status-payment_received { background: #dcfce7; color: #166534; }
.status-expired, .status-canceled { background: #fee2e2; color: #991b1b; }
.notice { padding: .75rem 1rem; border-radius: .5rem; margin: 1rem 0; font-weight: 600; }
.notice-payment_received { background: #dcfce7; color: #14532d; }
.notice-expired, .notice-canceled { background: #fee2e2; color: #7f1d1d; }
.notes { color: var(--muted); font-size: .9rem; padding-left: 1.2rem; }
.hint { color: var(--muted); font-size: .9rem; }
.notice-unprintable { background: #fef3c7; color: #78350f; font-weight: 400; }
label { display: block; font-weight: 700; margin-bottom: .25rem; }
input[type=text] { width: 100%; font: inherit; font-size: 1.1rem; padding: .6rem .75rem; border: 2px solid var(--muted); border-radius: .5rem; }
input[type=text]:focus, button:focus { outline: 3px solid var(--accent); outline-offset: 2px; }
input[aria-invalid=true] { border-color: #b91c1c; }
.field-error { color: #991b1b; font-weight: 600; }
.actions { display: flex; gap: .75rem; flex-wrap: wrap; margin-top: 1rem; }
button { font: inherit; font-weight: 700; padding: .7rem 1.2rem; border-radius: .5rem; border: 2px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
@media (max-width: 26rem) { dl { grid-template-columns: 1fr; gap: 0; } dd { margin-bottom: .5rem; } }
`;

/** The Content-Security-Policy allows exactly this style sheet, and no other inline style. */
export const PAGE_STYLE_HASH = `sha256-${createHash('sha256').update(PAGE_STYLE).digest('base64')}`;

export interface PaymentPageInput {
  order: PaymentPageOrder;
  bankAccount: PaymentPageBankAccount;
  language: PageLanguage;
  now: Date;
}

export function renderPaymentPage({ order, bankAccount, language, now }: PaymentPageInput): string {
  const t = PAGE_TEXTS[language];
  const status = buyerStatusOf(order, now);
  const amount = formatYen(order.amount);
  const deadline = html`<time datetime="${order.expiresAt.toISOString()}">${t.deadline(tokyoDateTimeOf(order.expiresAt))}</time>`;
  // Where and how to transfer is shown only while a transfer is wanted: a closed order's page
  // must not invite a second payment, or one that can no longer be matched.
  const instructions =
    status === 'awaiting_payment'
      ? html`
<section aria-labelledby="payee">
<h2 id="payee">${t.payeeHeading}</h2>
<dl>
<dt>${t.bankLabel}</dt><dd>${nameWithCode(bankAccount.bankName, bankAccount.bankCode)}</dd>
<dt>${t.branchLabel}</dt><dd>${nameWithCode(bankAccount.branchName, bankAccount.branchCode)}</dd>
<dt>${t.accountTypeLabel}</dt><dd>${t.ordinaryAccount}</dd>
<dt>${t.accountNumberLabel}</dt><dd class="account-number">${bankAccount.accountNumber}</dd>
<dt>${t.holderLabel}</dt><dd>${bankAccount.holderName}</dd>
</dl>
</section>
${payerNameSection(order.payerName, t)}
<ul class="notes">
<li>${t.exactAmountNote(amount)}</li>
<li>${t.statusUpdateNote}</li>
</ul>`
      : html`<p class="notice notice-${status}" role="status">${t.closedNotice[status]}</p>`;
  return buyerPage(
    language,
    t.title,
    order.mode === 'test',
    html`
<section aria-label="${t.title}">
<dl>
<dt>${t.statusLabel}</dt><dd><span class="status status-${status}">${t.status[status]}</span></dd>
<dt>${t.itemLabel}</dt><dd>${order.itemName}</dd>
<dt>${t.amountLabel}</dt><dd class="amount">${amount}</dd>
<dt>${t.deadlineLabel}</dt><dd>${deadline}</dd>
</dl>
</section>
${instructions}`,
  );
}

/**
 * The name to transfer under: as the bank will print it, which is what the deposit will carry;
 * or, when no bank can print the name the merchant gave (kanji), what the buyer should do instead.
 */
function payerNameSection(payerName: string, t: PaymentPageTexts): Html {
  const printed = bankForm(payerName);
  const body =
    printed === undefined
      ? html`<p class="payer-name">${payerName}</p>
<p class="notice notice-unprintable">${t.unprintablePayerName}</p>`
      : html`<p>${t.payerNameInstruction}</p>
<p class="payer-name">${printed}</p>
${printed === payerName ? null : html`<p class="hint">${t.payerNameAsGiven(payerName)}</p>`}`;
  return html`<section aria-labelledby="payer-name">
<h2 id="payer-name">${t.payerNameHeading}</h2>
${body}
</section>`;
}

/** One page for every address that leads to no order, so none of them tells anything apart. */
export function renderNotFoundPage(language: PageLanguage): string {
  const t = PAGE_TEXTS[language];
  return buyerPage(language, t.notFoundTitle, false, html`<section><p>${t.notFoundMessage}</p></section>`);
}

function nameWithCode(name: string | null, code: string): Html {
  return name === null ? html`${code}` : html`${name} <span class="code">(${code})</span>`;
}

/** A whole page for the buyer: its language switch, the test banner in test mode, and `content`. */
export function buyerPage(language: PageLanguage, title: string, testMode: boolean, content: Html): string {
  const other = PAGE_LANGUAGES.find((l) => l !== language)!;
  // A relative link keeps the secret token out of the markup; the page's own path is reused.
  const languageSwitch = html`<a href="?lang=${other}" hreflang="${other}" lang="${other}">${PAGE_TEXTS[other].languageName}</a>`;
  return html`<!doctype html>
<html lang="${language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${title}</title>
<link rel="icon" href="data:,">
<style>${new Html(PAGE_STYLE)}</style>
</head>
<body>
${testMode ? html`<p class="test-banner" role="note">${PAGE_TEXTS[language].testBanner}</p>` : null}
<main>
<header><h1>${title}</h1>${languageSwitch}</header>
${content}
</main>
</body>
</html>
`.markup;
}
