import { createHash } from 'node:crypto';

/** The console's one style sheet. Colours keep a contrast of at least 4.5:1 against their background. */
export const CONSOLE_CSS = `
:root { color-scheme: light; --ink: #1f2933; --muted: #4a5562; --line: #cbd2d9; --accent: #0b4f8a; --bg: #f5f7fa; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); line-height: 1.55;
  font-family: system-ui, -apple-system, "Hiragino Sans", "Hiragino Kaku Gothic ProN", "Noto Sans JP", "IPAGothic", Meiryo, sans-serif; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, main:focus-visible, .notice:focus-visible { outline: 3px solid #b7791f; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5rem 1rem; }
.skip:focus { left: 1rem; z-index: 10; }
.test-banner { margin: 0; padding: .5rem 1rem; text-align: center; font-weight: 700; color: #3d2a00; border-bottom: 3px solid #b7791f;
  background: repeating-linear-gradient(-45deg, #fde68a 0 12px, #fcd34d 12px 24px); }
.top { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; justify-content: space-between; align-items: center; padding: .5rem 1rem; background: #fff; border-bottom: 1px solid var(--line); }
.brand { margin: 0; font-weight: 700; }
.org { font-weight: 400; color: var(--muted); }
.top-tools { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; }
.who { color: var(--muted); }
.mode { font-weight: 700; }
.mode-test { color: #7a4b00; }
.mode-live { color: #14532d; }
.main-nav { background: #fff; border-bottom: 1px solid var(--line); }
.main-nav ul { list-style: none; margin: 0; padding: 0 1rem; display: flex; flex-wrap: wrap; gap: 0 1rem; }
.main-nav a { display: inline-block; padding: .6rem .2rem; text-decoration: none; font-weight: 600; }
.main-nav a[aria-current="page"] { border-bottom: 3px solid var(--accent); }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; overflow-wrap: anywhere; }
p, li, code { overflow-wrap: anywhere; }
section, .panel { background: #fff; border: 1px solid var(--line); border-radius: .5rem; padding: 1rem; margin: 1rem 0; }
table { border-collapse: collapse; width: 100%; background: #fff; }
caption { text-align: left; font-weight: 700; padding: .25rem 0; }
th, td { border-bottom: 1px solid var(--line); padding: .45rem .5rem; text-align: left; vertical-align: top; word-break: keep-all; }
th { background: #eef2f6; white-space: nowrap; }
td code { overflow-wrap: normal; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.table-wrap { overflow-x: auto; }
.table-wrap:focus-visible { outline: 3px solid #b7791f; outline-offset: 2px; }
.facts { display: grid; grid-template-columns: minmax(9rem, max-content) minmax(0, 1fr); gap: .35rem 1rem; margin: 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 .55rem; border-radius: 999px; font-size: .9rem; font-weight: 700; border: 1px solid currentColor; }
.badge-held, .badge-expired, .badge-pending, .badge-failing { color: #7a4b00; background: #fff7e0; }
.badge-unmatched, .badge-open { color: #0b4f8a; background: #e8f1fb; }
.badge-confirmed, .badge-paid, .badge-paid_outside, .badge-succeeded, .badge-on { color: #14532d; background: #e7f7ec; }
.badge-excluded, .badge-canceled, .badge-failed, .badge-off, .badge-revoked { color: #7f1d1d; background: #fdecec; }
.notice { padding: .6rem 1rem; border-radius: .4rem; font-weight: 600; }
.notice-info { background: #e8f1fb; color: #0b3a66; }
.notice-success { background: #e7f7ec; color: #14532d; }
.notice-error { background: #fdecec; color: #7f1d1d; }
form.inline { display: inline; }
.form-grid { display: flex; flex-wrap: wrap; gap: .75rem 1rem; align-items: flex-end; }
.form-grid label, .stack label { display: flex; flex-direction: column; gap: .2rem; font-weight: 600; }
.stack { display: flex; flex-direction: column; gap: .75rem; max-width: 36rem; }
.checkbox { flex-direction: row !important; align-items: center; gap: .5rem !important; font-weight: 400 !important; }
input, select, textarea { font: inherit; padding: .4rem .5rem; border: 1px solid #7b8794; border-radius: .3rem; background: #fff; color: var(--ink); }
select { max-width: 100%; }
.form-grid label { max-width: 100%; min-width: 0; }
textarea { min-height: 6rem; }
button { font: inherit; padding: .45rem .9rem; border-radius: .3rem; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: #9b1c1c; border-color: #9b1c1c; }
a.button { display: inline-block; padding: .45rem .9rem; border-radius: .3rem; border: 1px solid var(--accent); text-decoration: none; }
a.button.danger { background: #fff; color: #9b1c1c; border-color: #9b1c1c; }
.link-button { background: none; border: none; color: var(--accent); text-decoration: underline; padding: 0; }
.tabs { display: flex; flex-wrap: wrap; gap: .5rem; list-style: none; padding: 0; margin: 0 0 1rem; }
.tabs a { display: inline-block; padding: .3rem .8rem; border: 1px solid var(--line); border-radius: 999px; background: #fff; text-decoration: none; }
.tabs a[aria-current="page"] { background: var(--accent); color: #fff; border-color: var(--accent); }
.pager { display: flex; gap: 1rem; margin: 1rem 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(13rem, 1fr)); gap: 1rem; }
.card { background: #fff; border: 1px solid var(--line); border-radius: .5rem; padding: 1rem; }
.card .figure { font-size: 1.8rem; font-weight: 700; margin: .25rem 0; }
.card h2 { margin: 0; font-size: 1rem; color: var(--muted); }
.timeline { list-style: none; padding: 0; margin: 0; border-left: 3px solid var(--line); }
.timeline li { margin: 0 0 .75rem; padding-left: 1rem; }
pre { background: #1f2933; color: #f5f7fa; padding: 1rem; border-radius: .4rem; overflow-x: auto; font-size: .85rem; }
code.secret { font-size: 1.05rem; background: #fff7e0; color: #3d2a00; padding: .2rem .4rem; border-radius: .3rem; overflow-wrap: anywhere; }
.muted { color: var(--muted); }
.actions { display: flex; flex-wrap: wrap; gap: .75rem; align-items: flex-start; }
img.qr { background: #fff; padding: .5rem; border: 1px solid var(--line); }
ol.codes { columns: 2 12rem; font-size: 1.1rem; }
code.wrap { overflow-wrap: anywhere; }
kbd { font-family: ui-monospace, monospace; font-size: .85em; border: 1px solid currentColor; border-radius: .25rem; padding: 0 .3rem; }
.shortcuts { margin: .25rem 0 0; padding-left: 1.25rem; }
.candidate-form { gap: .4rem; min-width: 11rem; }
button.chosen { outline: 3px solid #b7791f; outline-offset: 2px; }
@media (max-width: 40rem) {
  .facts { grid-template-columns: minmax(0, 1fr); }
  .facts dd { margin-bottom: .4rem; }
  main { padding: .75rem; }
  .top, .main-nav ul { padding-left: .75rem; padding-right: .75rem; }
}
`;

/** Progressive enhancement only: a copy button for shown-once texts. Everything works without it. */
export const CONSOLE_JS = `
document.addEventListener('click', function (event) {
  var button = event.target.closest('[data-copy]');
  if (!button || !navigator.clipboard) return;
  var source = document.getElementById(button.getAttribute('data-copy'));
  if (!source) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(function () {
    button.textContent = button.getAttribute('data-copied') || button.textContent;
  });
});
document.querySelectorAll('[data-copy]').forEach(function (button) { button.hidden = false; });
// The result of the action that led here (a notice marked data-result) takes the focus, where
// the browser's autofocus has not already given it.
var result = document.querySelector('[data-result]');
if (result && document.activeElement !== result) result.focus();
// A held deposit's shortcuts: j/k next/previous held deposit, 1-9 choose a candidate, c confirm
// the chosen one and go on (with none chosen, the order the matcher would confirm it for now).
if (document.querySelector('[data-shortcuts="held"]')) {
  var chosen = null;
  document.addEventListener('keydown', function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    var key = event.key;
    if (key === 'j' || key === 'k') {
      var link = document.querySelector('a[data-key="' + key + '"]');
      if (link) { event.preventDefault(); link.click(); }
    } else if (/^[1-9]$/.test(key)) {
      var button = document.querySelector('button[data-candidate="' + key + '"]');
      if (!button) return;
      event.preventDefault();
      if (chosen) chosen.classList.remove('chosen');
      chosen = button;
      chosen.classList.add('chosen');
      chosen.focus();
    } else if (key === 'c') {
      var pick = chosen || document.querySelector('button[data-candidate][data-without-choice]');
      if (pick) { event.preventDefault(); pick.click(); }
    }
  });
}
`;

export const assetVersion = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);
