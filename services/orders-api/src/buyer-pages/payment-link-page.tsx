import { LIMITS } from '@pmatch/contracts';
import type { PageLanguage } from '../domain/payment-page';
import type { BuyerName } from '../domain/payment-links';
import { tokyoClockOf, yen } from '../intl';
import type { PaymentLinkPageStep } from '../use-cases/order-at-payment-link';
import { BuyerDocument } from './document';
import { LINK_PAGE_TEXTS } from './payment-link-page-texts';
import { PAGE_TEXTS } from './payment-page-texts';

/** The link as its buyer's page shows it. */
export interface PaymentLinkPageLink {
  mode: string;
  amount: bigint;
  itemName: string;
  expiresAt: Date | null;
}

/**
 * A payment link's page. Without a script (the page's policy allows none) it takes two posts: the
 * name, then the order under the name as the bank will print it.
 */
export function PaymentLinkPage({ link, step, language }: { link: PaymentLinkPageLink; step: PaymentLinkPageStep; language: PageLanguage }) {
  const t = LINK_PAGE_TEXTS[language];
  const p = PAGE_TEXTS[language];
  return (
    <BuyerDocument language={language} title={t.title} testMode={link.mode === 'test'}>
      <section aria-label={t.title}>
        <dl>
          <dt>{p.itemLabel}</dt>
          <dd>{link.itemName}</dd>
          <dt>{p.amountLabel}</dt>
          <dd class="amount">{yen(link.amount)}</dd>
          {link.expiresAt === null ? null : (
            <>
              <dt>{t.availableUntilLabel}</dt>
              <dd>
                <time dateTime={link.expiresAt.toISOString()}>{p.deadline(tokyoClockOf(link.expiresAt))}</time>
              </dd>
            </>
          )}
        </dl>
      </section>
      <Step step={step} language={language} />
    </BuyerDocument>
  );
}

function Step({ step, language }: { step: PaymentLinkPageStep; language: PageLanguage }) {
  const t = LINK_PAGE_TEXTS[language];
  const lang = <input type="hidden" name="lang" value={language} />;
  switch (step.kind) {
    case 'closed':
      return (
        <p class="notice notice-canceled" role="status">
          {t.closed[step.status]}
        </p>
      );
    case 'too_many_orders':
      return (
        <p class="notice notice-canceled" role="alert">
          {t.tooManyOrders}
        </p>
      );
    case 'preview':
      return (
        <section aria-labelledby="bank-form">
          <h2 id="bank-form">{t.previewHeading}</h2>
          <p>{t.previewInstruction}</p>
          <p class="payer-name" id="payer-name-bank-form">
            {step.bankForm}
          </p>
          <form method="post">
            {lang}
            <input type="hidden" name="payer_name" value={step.typed} />
            <input type="hidden" name="attempt" value={step.attempt} />
            <div class="actions">
              <button type="submit" name="step" value="create">
                {t.confirm}
              </button>
              <button type="submit" name="step" value="edit" class="secondary">
                {t.edit}
              </button>
            </div>
          </form>
        </section>
      );
    case 'form': {
      const error = step.refused === undefined ? null : refusalText(step.refused, language);
      return (
        <form method="post">
          {lang}
          <input type="hidden" name="step" value="preview" />
          <label for="payer_name">{t.nameLabel}</label>
          <p class="hint" id="payer_name_hint">
            {t.nameHint}
          </p>
          {error === null ? null : (
            <p class="field-error" id="payer_name_error" role="alert">
              {error}
            </p>
          )}
          <input
            type="text"
            id="payer_name"
            name="payer_name"
            value={step.typed}
            maxLength={LIMITS.payerNameMax}
            autoComplete="name"
            required
            aria-describedby={error === null ? 'payer_name_hint' : 'payer_name_hint payer_name_error'}
            aria-invalid={error === null ? undefined : 'true'}
          />
          <div class="actions">
            <button type="submit">{t.next}</button>
          </div>
        </form>
      );
    }
  }
}

function refusalText(refused: Exclude<BuyerName, { kind: 'printable' }>, language: PageLanguage): string {
  const t = LINK_PAGE_TEXTS[language];
  switch (refused.kind) {
    case 'empty':
      return t.emptyName;
    case 'too_long':
      return t.tooLongName;
    case 'unprintable':
      if (refused.characters.length === 0) return t.unprintableNameGeneric;
      return t.unprintableName(refused.characters.map((ch) => (language === 'ja' ? `「${ch}」` : `“${ch}”`)).join(language === 'ja' ? '' : ', '));
  }
}
