import { createHash } from 'node:crypto';
import type { ComponentChildren } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { PAGE_LANGUAGES, type PageLanguage } from '../domain/payment-page';
import { PAGE_TEXTS } from './payment-page-texts';

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
.transfer-code { letter-spacing: .1em; }
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

/** Renders a buyer's page as a whole document. Every value in it went through Preact, which escapes text and attributes. */
export function documentOf(page: ComponentChildren): string {
  return `<!doctype html>${renderToString(<>{page}</>)}`;
}

/** A whole page for the buyer: its language switch, the test banner in test mode, and its content. */
export function BuyerDocument({
  language,
  title,
  testMode,
  children,
}: {
  language: PageLanguage;
  title: string;
  testMode: boolean;
  children: ComponentChildren;
}) {
  const other = PAGE_LANGUAGES.find((l) => l !== language)!;
  return (
    <html lang={language}>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <title>{title}</title>
        <link rel="icon" href="data:," />
        {/* The style sheet is a constant of this file, hashed for the page's policy. */}
        <style dangerouslySetInnerHTML={{ __html: PAGE_STYLE }} />
      </head>
      <body>
        {testMode ? (
          <p class="test-banner" role="note">
            {PAGE_TEXTS[language].testBanner}
          </p>
        ) : null}
        <main>
          <header>
            <h1>{title}</h1>
            {/* A relative link keeps the secret token out of the markup; the page's own path is reused. */}
            <a href={`?lang=${other}`} hrefLang={other} lang={other}>
              {PAGE_TEXTS[other].languageName}
            </a>
          </header>
          {children}
        </main>
      </body>
    </html>
  );
}
