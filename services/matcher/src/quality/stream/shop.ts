import { bankForm, dammInterim } from '@pmatch/contracts';
import { COMPANIES, FAMILY_NAMES, GIVEN_NAMES, OTHER_SENDERS, type WrittenName } from './names';

/**
 * A shop's returning customers over months, with the habits of Japanese bank transfers in the
 * proportions `STREAM_MIX` gives (docs/matching-quality.md says where each comes from). Everything
 * is drawn from one seeded generator: the same seed is the same stream.
 */

/** How a customer writes the payer name at checkout. */
export type OrderNameHabit = 'katakana' | 'bank_form' | 'hiragana' | 'kanji';

/** Whose account a customer's transfers come from, and how the bank prints it. */
export type PaymentHabit = 'own' | 'family' | 'drops_last_kana' | 'member_number';

export interface Customer {
  id: number;
  /** The customer's name in katakana, family name first. */
  kana: string;
  kanji: string;
  corporate: boolean;
  orderNameHabit: OrderNameHabit;
  paymentHabit: PaymentHabit;
  /** The name of the account that pays (a parent's or spouse's for `family`), in katakana. */
  payerKana: string;
  memberNumber: string;
  writesTransferCode: boolean;
  /** The first month the customer orders, and the last (inclusive). */
  from: number;
  until: number;
}

/** The proportions of the stream, each a probability. */
export const STREAM_MIX = {
  customersAtStart: 300,
  newCustomersPerMonth: 30,
  leavingPerMonth: 0.07,
  corporate: 0.08,
  orderName: { katakana: 0.55, bank_form: 0.2, hiragana: 0.2, kanji: 0.05 },
  payment: { own: 0.8, family: 0.11, drops_last_kana: 0.04, member_number: 0.05 },
  writesTransferCode: 0.3,
  /** Of each month's customers: 0, 1 or 2 orders. */
  ordersPerMonth: [0.2, 0.65, 0.15],
  neverPaid: 0.05,
  feeDeducted: 0.05,
  typo: 0.02,
  reportedTwice: 0.03,
  notForAnyOrder: 0.03,
  namesakePairs: 8,
} as const;

/** Prices of the shop's goods; an order is one or two of them, with shipping under 5,000 yen. */
const PRICES = [1_980, 2_480, 2_980, 3_300, 3_980, 4_400, 4_980, 5_500, 6_600, 7_700, 9_800, 12_800];
const SHIPPING = 880;
/** What payers deduct as the transfer fee (docs/guide.md "Near misses"). */
const DEDUCTED_FEES = [110, 165, 220, 330, 440, 550, 660, 770, 880];

/** mulberry32: a small, fast seeded generator; quality runs need repeatability, not secrecy. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A key of `weights` drawn in proportion to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    let left = this.next() * entries.reduce((sum, [, w]) => sum + w, 0);
    for (const [key, weight] of entries) {
      left -= weight;
      if (left < 0) return key;
    }
    return entries.at(-1)![0];
  }
}

const toHiragana = (kana: string): string => kana.replace(/[\u30A1-\u30F6]/gu, (ch) => String.fromCodePoint(ch.codePointAt(0)! - 0x60));

/** A person's name: family and given, kanji and katakana. */
function personName(random: Random): { kana: string; kanji: string } {
  const family = random.pick(FAMILY_NAMES);
  const given = random.pick(GIVEN_NAMES);
  return { kana: `${family[1]} ${given[1]}`, kanji: `${family[0]} ${given[0]}` };
}

/** The customers of the whole stream: those at the start, and each month's newcomers; `codeShare` of them write transfer codes. */
export function customersOf(random: Random, months: number, codeShare: number = STREAM_MIX.writesTransferCode): Customer[] {
  const customers: Customer[] = [];
  const add = (from: number) => {
    const corporate = random.chance(STREAM_MIX.corporate);
    const company: WrittenName = random.pick(COMPANIES);
    const person = personName(random);
    const name = corporate ? { kana: company[1], kanji: company[0] } : person;
    const paymentHabit = corporate ? 'own' : random.weighted(STREAM_MIX.payment);
    // A parent or spouse: the family name stays, the given name is someone else's.
    const relative = `${name.kana.split(' ')[0]} ${random.pick(GIVEN_NAMES)[1]}`;
    let until = months;
    for (let month = from + 1; month <= months; month++) {
      if (random.chance(STREAM_MIX.leavingPerMonth)) {
        until = month - 1;
        break;
      }
    }
    customers.push({
      id: customers.length,
      ...name,
      corporate,
      orderNameHabit: corporate ? random.pick(['katakana', 'kanji'] as const) : random.weighted(STREAM_MIX.orderName),
      paymentHabit,
      payerKana: paymentHabit === 'family' && relative !== name.kana ? relative : name.kana,
      memberNumber: String(random.int(10_000, 99_999)),
      writesTransferCode: random.chance(codeShare),
      from,
      until,
    });
  };
  for (let i = 0; i < STREAM_MIX.customersAtStart; i++) add(1);
  for (let month = 2; month <= months; month++) for (let i = 0; i < STREAM_MIX.newCustomersPerMonth; i++) add(month);
  // Namesakes: a later customer with an earlier one's name, some of them ordering in kanji.
  for (let pair = 0; pair < STREAM_MIX.namesakePairs; pair++) {
    const [a, b] = [random.int(0, customers.length - 1), random.int(0, customers.length - 1)];
    if (a === b || customers[a]!.corporate || customers[b]!.corporate) continue;
    const namesake = customers[b]!;
    Object.assign(namesake, { kana: customers[a]!.kana, kanji: customers[a]!.kanji });
    if (namesake.paymentHabit !== 'family') namesake.payerKana = namesake.kana;
  }
  return customers;
}

/** The payer name a customer types at checkout. */
export function payerNameOf(customer: Customer): string {
  switch (customer.orderNameHabit) {
    case 'kanji':
      return customer.kanji;
    case 'bank_form':
      return bankForm(customer.kana) ?? customer.kana;
    case 'hiragana':
      return toHiragana(customer.kana);
    case 'katakana':
      return customer.kana;
  }
}

/** The bank's name field: 48 half-width characters, a code written before the name inside them. */
const NAME_FIELD = 48;

/** How the bank prints a customer's transfer: their account's name, with what they put before it. */
export function depositorNameOf(customer: Customer, transferCode: string | null, random: Random): string {
  let printed = bankForm(customer.paymentHabit === 'drops_last_kana' ? customer.payerKana.slice(0, -1) : customer.payerKana)!;
  if (customer.paymentHabit === 'member_number') printed = `${customer.memberNumber} ${printed}`;
  if (transferCode !== null) printed = `${transferCode} ${printed}`;
  if (random.chance(STREAM_MIX.typo)) printed = withTypo(printed, random);
  return [...printed].slice(0, NAME_FIELD).join('');
}

/** One kana of the name replaced by another: what a payer's slip does. */
function withTypo(printed: string, random: Random): string {
  const chars = [...printed];
  const kana = chars.map((ch, i) => (/[\uFF66-\uFF9D]/u.test(ch) ? i : -1)).filter((i) => i >= 0);
  if (kana.length === 0) return printed;
  const at = random.pick(kana);
  const others = 'ｱｲｳｴｵｶｷｸｹｺｻｼｽｾｿﾀﾁﾂﾃﾄﾅﾆﾇﾈﾉﾊﾋﾌﾍﾎﾏﾐﾑﾒﾓﾔﾕﾖﾗﾘﾙﾚﾛﾜﾝ'.replace(chars[at]!, '');
  chars[at] = random.pick([...others]);
  return chars.join('');
}

/** An order's amount: one or two goods, shipping below 5,000 yen. */
export function amountOf(random: Random): number {
  const goods = random.pick(PRICES) + (random.chance(0.3) ? random.pick(PRICES) : 0);
  return goods < 5_000 ? goods + SHIPPING : goods;
}

export const deductedFee = (random: Random): number => random.pick(DEDUCTED_FEES);

export const otherSender = (random: Random): string => random.pick(OTHER_SENDERS);

/** A transfer code no open order of the shop holds, drawn as the service draws one (six digits and a check digit). */
export function freeTransferCode(held: ReadonlySet<string>, random: Random): string {
  for (;;) {
    const payload = String(random.int(100_000, 999_999));
    const code = `${payload}${dammInterim(payload)}`;
    if (!held.has(code)) return code;
  }
}
