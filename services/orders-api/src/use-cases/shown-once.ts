import { randomBase62 } from '@pmatch/contracts';
import type { Db } from '@pmatch/db';
import { SecretNotOpened } from '@pmatch/platform';
import { insertDisplay, takeDisplay } from '../data/console-displays';
import type { OrdersApiDeps } from './deps';

/** What each kind of one-time display holds: a secret the action made or revealed, and what the page says of it. */
export interface ShownOnce {
  api_key: { keyText: string; name: string };
  webhook_secret: { endpointId: string; secret: string; previousSecretExpiresAt: string | null; rotated: boolean };
  recovery_codes: { codes: string[]; secondFactorTurnedOn: boolean };
  setup_link: { userId: string; email: string; url: string; expiresAt: string };
}
export type ShownOnceKind = keyof ShownOnce;

/** The session a secret is shown to: only its next GET of the page can read it. */
export interface ShowTo {
  sessionToken: string;
}

/** How long a secret waits for the page the action redirects to. */
export const SHOWN_ONCE_LIFETIME_MS = 10 * 60 * 1000;

type Deps = Pick<OrdersApiDeps, 'clock' | 'secretBox'>;

/**
 * Keeps `value` sealed for the session's next GET of its page, in the caller's transaction (the
 * action and what it shows commit together), and resolves with the id the redirect names.
 * docs/decisions/0152-secrets-shown-once-after-a-redirect.md
 */
export async function keepToShowOnce<K extends ShownOnceKind>(deps: Deps, db: Db, to: ShowTo, kind: K, value: ShownOnce[K]): Promise<string> {
  const id = randomBase62(32);
  const sealed = deps.secretBox.seal(JSON.stringify({ kind, value }), { kind: 'console_display', id });
  const now = deps.clock.now();
  await insertDisplay(db, { id, sessionToken: to.sessionToken, kind, sealed }, now, new Date(now.getTime() + SHOWN_ONCE_LIFETIME_MS));
  return id;
}

/**
 * What the display `id` held for this session, deleting it: undefined when it was read already,
 * has expired, is another session's or another kind's. A reload of the page therefore shows
 * nothing and repeats nothing.
 */
export async function takeShownOnce<K extends ShownOnceKind>(
  deps: Deps & Pick<OrdersApiDeps, 'database'>,
  to: ShowTo,
  kind: K,
  id: string | undefined,
): Promise<ShownOnce[K] | undefined> {
  if (id === undefined || !/^[0-9A-Za-z]{32}$/.test(id)) return undefined;
  const sealed = await takeDisplay(deps.database.prisma, id, to.sessionToken, kind, deps.clock.now());
  if (sealed === null) return undefined;
  try {
    const opened = JSON.parse(deps.secretBox.open(sealed, { kind: 'console_display', id })) as { kind: string; value: ShownOnce[K] };
    return opened.kind === kind ? opened.value : undefined;
  } catch (error) {
    if (error instanceof SecretNotOpened) return undefined;
    throw error;
  }
}
