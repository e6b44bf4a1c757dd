import { LIMITS, type PaymentLinkStatus } from '@pmatch/contracts';
import type { BuyerName } from './payment-links';
import { LINK_PAGE_TEXTS } from './payment-link-page-texts';
import { buyerPage, formatYen, html, tokyoDateTimeOf, type Html } from './payment-page';
import { PAGE_TEXTS, type PageLanguage } from './payment-page-texts';

/** The link as its buyer's page shows it. */
export interface PaymentLinkPageLink {
  mode: string;
  amount: bigint;
  itemName: string;
  expiresAt: Date | null;
}

/** What the page shows below the link: the name form (with a refusal), the bank form to confirm, or why no order can be made. */
export type PaymentLinkPageStep =
  | { kind: 'form'; typed: string; refused?: Exclude<BuyerName, { kind: 'printable' }> }
  | { kind: 'preview'; typed: string; bankForm: string; attempt: string }
  | { kind: 'closed'; status: Exclude<PaymentLinkStatus, 'active'> }
  | { kind: 'too_many_orders' };

/**
 * A payment link's page. Without a script (the page's policy allows none) it takes two posts: the
 * name, then the order under the name as the bank will print it. Every value is escaped (`html`).
 */
export function renderPaymentLinkPage(link: PaymentLinkPageLink, step: PaymentLinkPageStep, language: PageLanguage): string {
  const t = LINK_PAGE_TEXTS[language];
  const p = PAGE_TEXTS[language];
  const until =
    link.expiresAt === null
      ? null
      : html`<dt>${t.availableUntilLabel}</dt><dd><time datetime="${link.expiresAt.toISOString()}">${p.deadline(tokyoDateTimeOf(link.expiresAt))}</time></dd>`;
  return buyerPage(
    language,
    t.title,
    link.mode === 'test',
    html`
<section aria-label="${t.title}">
<dl>
<dt>${p.itemLabel}</dt><dd>${link.itemName}</dd>
<dt>${p.amountLabel}</dt><dd class="amount">${formatYen(link.amount)}</dd>
${until}
</dl>
</section>
${stepMarkup(step, language)}`,
  );
}

function stepMarkup(step: PaymentLinkPageStep, language: PageLanguage): Html {
  const t = LINK_PAGE_TEXTS[language];
  const lang = html`<input type="hidden" name="lang" value="${language}">`;
  switch (step.kind) {
    case 'closed':
      return html`<p class="notice notice-canceled" role="status">${t.closed[step.status]}</p>`;
    case 'too_many_orders':
      return html`<p class="notice notice-canceled" role="alert">${t.tooManyOrders}</p>`;
    case 'preview':
      return html`
<section aria-labelledby="bank-form">
<h2 id="bank-form">${t.previewHeading}</h2>
<p>${t.previewInstruction}</p>
<p class="payer-name" id="payer-name-bank-form">${step.bankForm}</p>
<form method="post">
${lang}
<input type="hidden" name="payer_name" value="${step.typed}">
<input type="hidden" name="attempt" value="${step.attempt}">
<div class="actions">
<button type="submit" name="step" value="create">${t.confirm}</button>
<button type="submit" name="step" value="edit" class="secondary">${t.edit}</button>
</div>
</form>
</section>`;
    case 'form': {
      const error = step.refused === undefined ? null : refusalText(step.refused, language);
      return html`
<form method="post">
${lang}
<input type="hidden" name="step" value="preview">
<label for="payer_name">${t.nameLabel}</label>
<p class="hint" id="payer_name_hint">${t.nameHint}</p>
${error === null ? null : html`<p class="field-error" id="payer_name_error" role="alert">${error}</p>`}
${nameInput(step.typed, error !== null)}
<div class="actions"><button type="submit">${t.next}</button></div>
</form>`;
    }
  }
}

function nameInput(typed: string, invalid: boolean): Html {
  const describedBy = invalid ? 'payer_name_hint payer_name_error' : 'payer_name_hint';
  return html`<input type="text" id="payer_name" name="payer_name" value="${typed}" maxlength="${String(LIMITS.payerNameMax)}" autocomplete="name" required aria-describedby="${describedBy}"${invalid ? html` aria-invalid="true"` : null}>`;
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
