import type { ConsoleRequestContext } from './request';
import type { Texts } from './texts';

/**
 * Recorded codes in a shop owner's words: an event type, who decided a payment (`auto`, `shop`,
 * `api_key:key_…`, `user:usr_…`; a person by their e-mail where `people` knows them) and from where.
 * A code with no words is shown as it is.
 */
export function eventTypeWords(ctx: ConsoleRequestContext, type: string): string {
  return ctx.t.events.types[type] ?? type;
}

export function deciderWords(ctx: ConsoleRequestContext, decidedBy: string, people: ReadonlyMap<string, string> = new Map()): string {
  const e = ctx.t.events;
  if (decidedBy.startsWith('user:')) {
    const email = people.get(decidedBy.slice('user:'.length));
    return email === undefined ? e.someone : e.person(email);
  }
  if (decidedBy.startsWith('api_key:')) return e.apiKey;
  return e.deciders[decidedBy] ?? decidedBy;
}

export function triggerWords(ctx: ConsoleRequestContext, trigger: string): string {
  return ctx.t.events.triggers[trigger] ?? trigger;
}

/** What an event is about, named as a shop owner knows it (an order by its number, a deposit by its payer), or undefined. */
export function eventSubjectWords(ctx: ConsoleRequestContext, data: unknown): { href: string; text: string } | undefined {
  const object = (data as { object?: { id?: unknown; object?: unknown; external_id?: unknown; payer_name?: unknown; counterparty?: unknown } }).object;
  if (typeof object?.id !== 'string') return undefined;
  const name = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  if (object.id.startsWith('ord_')) {
    return { href: `/dashboard/orders/${object.id}`, text: ctx.t.events.order(name(object.external_id) ?? name(object.payer_name) ?? '') };
  }
  if (object.id.startsWith('txn_')) {
    return { href: `/dashboard/deposits/${object.id}`, text: ctx.t.events.deposit(name(object.counterparty) ?? name(object.payer_name) ?? '') };
  }
  return undefined;
}

/**
 * A decision's or candidate's reason in words: the decision's, else the fit's, else the held
 * filter's label; the code itself only when none has words for it. Empty for no reason.
 */
export function reasonWords(t: Texts, reason: string | null | undefined): string {
  if (reason === undefined || reason === null || reason === '') return '';
  return t.reasons[reason] ?? t.fits[reason] ?? t.deposits.heldReasons[reason] ?? reason;
}
