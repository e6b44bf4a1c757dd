import type { Reentry } from '../use-cases/console-reauthenticate';
import type { Texts } from './texts';

/** How a failed re-entry is answered: its status and the sentence the form shows. */
export function reentryRefusal(t: Texts, outcome: Exclude<Reentry, 'confirmed'>, asked: 'password' | 'code'): { status: number; message: string } {
  if (outcome === 'throttled') return { status: 429, message: t.security.reentryThrottled };
  if (outcome === 'unavailable') return { status: 503, message: t.security.unavailable };
  return { status: 403, message: asked === 'password' ? t.security.wrongPassword : t.security.wrongCode };
}
