import type { ConsoleRequestContext } from '../request';

/** On a deposit's page: the previous and next held deposit, oldest first, and the page's keyboard shortcuts. */
export function HeldNavigation({
  ctx,
  neighbours,
  shortcuts,
}: {
  ctx: ConsoleRequestContext;
  neighbours: { previous: string | undefined; next: string | undefined };
  shortcuts: boolean;
}) {
  const d = ctx.t.deposits;
  return (
    <nav aria-labelledby="held-nav" class="panel" data-shortcuts="held">
      <h2 id="held-nav">{d.heldNavigation}</h2>
      <p class="actions">
        {neighbours.previous ? (
          <a href={`/dashboard/deposits/${neighbours.previous}`} rel="prev" data-key="k">
            ← {d.previousHeld}
          </a>
        ) : null}
        {neighbours.next ? (
          <a href={`/dashboard/deposits/${neighbours.next}`} rel="next" data-key="j">
            {d.nextHeld} →
          </a>
        ) : null}
      </p>
      <p class="muted">{d.shortcutsIntro}</p>
      <ul class="shortcuts">
        <li>
          <kbd>j</kbd> / <kbd>k</kbd>: {d.shortcutNextPrevious}
        </li>
        {shortcuts ? (
          <>
            <li>
              <kbd>1</kbd>–<kbd>9</kbd>: {d.shortcutChoose}
            </li>
            <li>
              <kbd>c</kbd>: {d.shortcutConfirm}
            </li>
          </>
        ) : null}
      </ul>
    </nav>
  );
}
