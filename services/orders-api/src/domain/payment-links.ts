import { AppError, LIMITS, bankForm } from '@pmatch/contracts';

/** A link's end must lie ahead: a link that has ended already could take no order. */
export function paymentLinkExpiry(expiresAt: string | undefined, now: Date): Date | null {
  if (expiresAt === undefined) return null;
  const at = new Date(expiresAt);
  if (at.getTime() <= now.getTime()) throw new AppError('parameter_invalid', 'expires_at must be in the future.', { param: 'expires_at' });
  return at;
}

/** What a buyer typed as the name they will transfer under, judged. */
export type BuyerName =
  | { kind: 'printable'; typed: string; bankForm: string }
  | { kind: 'empty' }
  | { kind: 'too_long' }
  /** Characters no bank prints, each once, in the order typed (at most 10). */
  | { kind: 'unprintable'; typed: string; characters: string[] };

const UNPRINTABLE_SHOWN = 10;
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The name as its bank will print it (`bankForm`), or why it cannot be the name of a transfer:
 * a name no bank prints would never match its deposit automatically, so the buyer is asked for
 * one in kana or Latin letters instead (docs/decisions/0081-buyers-names-as-banks-print-them.md).
 */
export function judgeBuyerName(input: unknown): BuyerName {
  const typed = typeof input === 'string' ? input.trim() : '';
  if (typed === '') return { kind: 'empty' };
  if (typed.length > LIMITS.payerNameMax) return { kind: 'too_long' };
  const printed = CONTROL.test(typed) ? undefined : bankForm(typed);
  if (printed !== undefined && printed.trim() !== '') return { kind: 'printable', typed, bankForm: printed };
  const characters = [...new Set([...typed].filter((ch) => ch.trim() !== '' && !CONTROL.test(ch) && bankForm(ch) === undefined))].slice(0, UNPRINTABLE_SHOWN);
  return { kind: 'unprintable', typed, characters };
}

/** The random part of a buyer's attempt at a link: it makes a second click answer the first order. */
export const ATTEMPT_PATTERN = /^[0-9A-Za-z]{24}$/;

/** The external_id of the order a buyer's attempt makes: the link's id and the attempt. */
export function linkOrderExternalId(linkId: string, attempt: string): string {
  return `${linkId}:${attempt}`;
}
