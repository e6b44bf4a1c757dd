import { bankForm } from '@pmatch/contracts';
import { buyerStatusOf, type PageLanguage, type PaymentPageBankAccount, type PaymentPageOrder } from '../domain/payment-page';
import { tokyoClockOf, yen } from '../intl';
import { BuyerDocument } from './document';
import { PAGE_TEXTS, type PaymentPageTexts } from './payment-page-texts';

export interface PaymentPageProps {
  order: PaymentPageOrder;
  bankAccount: PaymentPageBankAccount;
  language: PageLanguage;
  now: Date;
}

/** The buyer's payment page: the order, and while it waits for payment, where and under which name to transfer. */
export function PaymentPage({ order, bankAccount, language, now }: PaymentPageProps) {
  const t = PAGE_TEXTS[language];
  const status = buyerStatusOf(order, now);
  const amount = yen(order.amount);
  return (
    <BuyerDocument language={language} title={t.title} testMode={order.mode === 'test'}>
      <section aria-label={t.title}>
        <dl>
          <dt>{t.statusLabel}</dt>
          <dd>
            <span class={`status status-${status}`}>{t.status[status]}</span>
          </dd>
          <dt>{t.itemLabel}</dt>
          <dd>{order.itemName}</dd>
          <dt>{t.amountLabel}</dt>
          <dd class="amount">{amount}</dd>
          <dt>{t.deadlineLabel}</dt>
          <dd>
            <time dateTime={order.expiresAt.toISOString()}>{t.deadline(tokyoClockOf(order.expiresAt))}</time>
          </dd>
        </dl>
      </section>
      {/* Where and how to transfer is shown only while a transfer is wanted: a closed order's page
          must not invite a second payment, or one that can no longer be matched. */}
      {status === 'awaiting_payment' ? (
        <>
          <section aria-labelledby="payee">
            <h2 id="payee">{t.payeeHeading}</h2>
            <dl>
              <dt>{t.bankLabel}</dt>
              <dd>
                <NameWithCode name={bankAccount.bankName} code={bankAccount.bankCode} />
              </dd>
              <dt>{t.branchLabel}</dt>
              <dd>
                <NameWithCode name={bankAccount.branchName} code={bankAccount.branchCode} />
              </dd>
              <dt>{t.accountTypeLabel}</dt>
              <dd>{t.accountTypes[bankAccount.accountType]}</dd>
              <dt>{t.accountNumberLabel}</dt>
              <dd class="account-number">{bankAccount.accountNumber}</dd>
              <dt>{t.holderLabel}</dt>
              <dd>{bankAccount.holderName}</dd>
            </dl>
            {bankAccount.dedicated === null ? null : <p class="notice notice-dedicated">{t.dedicatedAccountNote[bankAccount.dedicated]}</p>}
          </section>
          <PayerName payerName={order.payerName} transferCode={order.transferCode} t={t} />
          <ul class="notes">
            <li>{t.exactAmountNote(amount)}</li>
            <li>{t.statusUpdateNote}</li>
          </ul>
        </>
      ) : (
        <p class={`notice notice-${status}`} role="status">
          {t.closedNotice[status]}
        </p>
      )}
    </BuyerDocument>
  );
}

/**
 * The name to transfer under: the order's transfer code and the name, where the seller lets codes
 * decide (the code pays the order whatever the name); else the name as the bank will print it,
 * which is what the deposit will carry; or, when no bank can print the name (kanji), what the
 * buyer should do instead.
 */
function PayerName({ payerName, transferCode, t }: { payerName: string; transferCode: string | null; t: PaymentPageTexts }) {
  const printed = bankForm(payerName);
  return (
    <section aria-labelledby="payer-name">
      <h2 id="payer-name">{t.payerNameHeading}</h2>
      {transferCode !== null ? (
        <>
          <p>{t.transferCodeInstruction}</p>
          <p class="payer-name">
            <span class="transfer-code">{transferCode}</span> {printed ?? t.yourAccountName}
          </p>
          <p class="hint">{t.transferCodeHint(transferCode)}</p>
        </>
      ) : printed === undefined ? (
        <>
          <p class="payer-name">{payerName}</p>
          <p class="notice notice-unprintable">{t.unprintablePayerName}</p>
        </>
      ) : (
        <>
          <p>{t.payerNameInstruction}</p>
          <p class="payer-name">{printed}</p>
          {printed === payerName ? null : <p class="hint">{t.payerNameAsGiven(payerName)}</p>}
        </>
      )}
    </section>
  );
}

function NameWithCode({ name, code }: { name: string | null; code: string }) {
  return name === null ? (
    <>{code}</>
  ) : (
    <>
      {name} <span class="code">({code})</span>
    </>
  );
}

/** One page for every address that leads to no order or link, so none of them tells anything apart. */
export function NotFoundPage({ language }: { language: PageLanguage }) {
  const t = PAGE_TEXTS[language];
  return (
    <BuyerDocument language={language} title={t.notFoundTitle} testMode={false}>
      <section>
        <p>{t.notFoundMessage}</p>
      </section>
    </BuyerDocument>
  );
}
