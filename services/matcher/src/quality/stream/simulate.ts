import { normaliseName, transferCodeOf, type MatchingRule } from '@pmatch/contracts';
import { type CandidateOrder, type Decision, type DedicatedAccountFacts, type OtherOrder } from '../../domain/decide';
import { decideUnderRules } from '../../domain/decide-under-rules';
import { nearAmountRange } from '../../domain/near-misses';
import { PayerMemory, depositorKey, payerKey, type TaughtPayer } from '../../domain/names/payer-memory';
import type { NameReadings } from '../../domain/names/readings';
import { Random, STREAM_MIX, amountOf, customersOf, deductedFee, depositorNameOf, freeTransferCode, otherSender, payerNameOf, type Customer } from './shop';

/**
 * The shop's stream decided as the matcher decides it, deposit by deposit in time order, with an
 * in-memory ledger standing in for the database's reads (amount candidates, twins, the order a
 * code names, near misses, taught payers). At each month's end a simulated seller settles what is
 * left: matches each held or unmatched payment to its order and remembers the payer, marks orders
 * paid short by a fee as paid and excludes their deposits, excludes the rest, and cancels the
 * orders whose deadline passed unpaid.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const TOKYO = 9 * HOUR;
const ORDER_LIFETIME = 14 * DAY;
const EXPIRED_READ = 100;
const NEAR_READ = 50;

export interface StreamOptions {
  seed: number;
  months: number;
  rules: readonly MatchingRule[];
  /** The readings of kanji names; none: kanji orders are no rivals (to measure what they cost). */
  readings: NameReadings | undefined;
  /** The share of customers who write their order's transfer code (`STREAM_MIX.writesTransferCode` unless given). */
  codeShare?: number;
  /** The share of customers given a dedicated transfer account of their own (継続型); 0 unless given. */
  dedicatedShare?: number;
}

/** The shop's one shared account; a customer with a dedicated account pays into `va_<id>`. */
const SHARED = 'shared';

/** What happened to one month's deposits (by the month they arrived in). */
export interface MonthFigures {
  month: number;
  deposits: number;
  /** Deposits that pay an order with its exact amount: the ones a matcher could confirm. */
  payable: number;
  confirmedAutomatically: number;
  /** Payable deposits held or left unmatched: a person settles them. */
  leftToPerson: number;
  /** Payments short or over by a fee or a small difference: a person settles them. */
  amountDiffers: number;
  notForAnyOrder: number;
  /** Second reports of one transfer (a push and a statement): held as possible duplicates. */
  reportedTwice: number;
  /** Confirmations of an order the depositor did not pay, or of money that pays no order. */
  wrongConfirmations: number;
  /** Why payable deposits were left to a person, by decision reason. */
  leftBecause: Record<string, number>;
}

type Truth = { kind: 'payment' | 'fee'; orderId: string } | { kind: 'duplicate' | 'other' };

interface LedgerOrder extends CandidateOrder {
  account: string;
  seq: number;
  amount: number;
  closed: 'paid' | 'paid_outside' | 'canceled' | null;
}

interface LedgerDeposit {
  account: string;
  id: string;
  seq: number;
  month: number;
  amount: number;
  counterparty: string;
  occurredAt: Date;
  truth: Truth;
  status: 'confirmed' | 'held' | 'unmatched' | 'excluded';
}

type Happening =
  | { at: number; kind: 'order'; order: Pick<LedgerOrder, 'id' | 'amount' | 'payerName' | 'account'> }
  | { at: number; kind: 'deposit'; make: () => Omit<LedgerDeposit, 'id' | 'seq' | 'status'> };

const monthStart = (month: number): number => Date.UTC(2026, month - 1, 1) - TOKYO;
const tokyoDay = (at: number): number => Math.floor((at + TOKYO) / DAY);

/** Runs the stream and gives each month's figures. */
export function simulateStream(options: StreamOptions): MonthFigures[] {
  const random = new Random(options.seed);
  const ledger = new Ledger();
  const happenings = planHappenings(random, options.months, ledger, options.codeShare, options.dedicatedShare ?? 0);
  const figures = Array.from({ length: options.months }, (_, i) => emptyFigures(i + 1));
  let settledMonth = 0;
  for (const happening of happenings.sort((a, b) => a.at - b.at)) {
    const month = monthOf(happening.at);
    while (settledMonth < month - 1) ledger.settleAll(monthStart(++settledMonth + 1));
    if (happening.kind === 'order') {
      ledger.addOrder(happening.order, happening.at, random);
      continue;
    }
    const deposit = ledger.addDeposit(happening.make());
    if (deposit.month > options.months) continue;
    const decision = ledger.decide(deposit, options);
    count(figures[deposit.month - 1]!, deposit, decision);
  }
  return figures;
}

function monthOf(at: number): number {
  let month = 1;
  while (monthStart(month + 1) <= at) month += 1;
  return month;
}

/** Every order and deposit of the stream, each when it happens. */
function planHappenings(random: Random, months: number, ledger: Ledger, codeShare: number | undefined, dedicatedShare: number): Happening[] {
  const happenings: Happening[] = [];
  const customers = customersOf(random, months, codeShare);
  for (const customer of customers) {
    // Chosen by id, not drawn: the stream's other draws stay those of a run without dedicated accounts.
    const account = customer.id % 100 < dedicatedShare * 100 ? `va_${customer.id}` : SHARED;
    for (let month = customer.from; month <= customer.until; month++) {
      const orders = random.weighted({ 0: STREAM_MIX.ordersPerMonth[0], 1: STREAM_MIX.ordersPerMonth[1], 2: STREAM_MIX.ordersPerMonth[2] });
      for (let n = 0; n < Number(orders); n++) {
        const at = monthStart(month) + random.next() * (monthStart(month + 1) - monthStart(month));
        const order = { id: `ord_${happenings.length}`, amount: amountOf(random), payerName: payerNameOf(customer), account };
        happenings.push({ at, kind: 'order', order });
        if (!random.chance(STREAM_MIX.neverPaid)) happenings.push(...paymentOf(random, ledger, customer, order.id, at + HOUR + random.next() * 4 * DAY));
      }
    }
  }
  for (let month = 1; month <= months; month++) {
    const active = customers.filter((c) => c.from <= month && month <= c.until).length;
    for (let n = 0; n < Math.round(active * STREAM_MIX.notForAnyOrder); n++) happenings.push(notForAnyOrder(random, month));
  }
  return happenings;
}

/** A customer's transfer for an order: its deposit, and maybe the same transfer reported again the same day. */
function paymentOf(random: Random, ledger: Ledger, customer: Customer, orderId: string, at: number): Happening[] {
  const fee = random.chance(STREAM_MIX.feeDeducted) ? deductedFee(random) : 0;
  const twice = random.chance(STREAM_MIX.reportedTwice);
  let first: Omit<LedgerDeposit, 'id' | 'seq' | 'status'> | undefined;
  const make = () => {
    const order = ledger.order(orderId);
    const code = customer.writesTransferCode ? (order.transferCode ?? null) : null;
    first = {
      account: order.account,
      month: monthOf(at),
      amount: order.amount - fee,
      counterparty: depositorNameOf(customer, code, random),
      occurredAt: new Date(at),
      truth: { kind: fee === 0 ? 'payment' : 'fee', orderId },
    };
    return first;
  };
  const deposit: Happening = { at, kind: 'deposit', make };
  if (!twice) return [deposit];
  // The statement of the day: the last moment of the transfer's Tokyo day.
  const endOfDay = (tokyoDay(at) + 1) * DAY - TOKYO - 1;
  return [deposit, { at: endOfDay, kind: 'deposit', make: () => ({ ...first!, occurredAt: new Date(endOfDay), truth: { kind: 'duplicate' } }) }];
}

function notForAnyOrder(random: Random, month: number): Happening {
  const at = monthStart(month) + random.next() * (monthStart(month + 1) - monthStart(month));
  const amount = random.chance(0.5) ? amountOf(random) : random.int(1, 30_000);
  const counterparty = otherSender(random);
  return { at, kind: 'deposit', make: () => ({ account: SHARED, month, amount, counterparty, occurredAt: new Date(at), truth: { kind: 'other' } }) };
}

/** The stream's bank account and what the database would hold of it. */
class Ledger {
  private readonly orders = new Map<string, LedgerOrder>();
  private readonly deposits: LedgerDeposit[] = [];
  private readonly taught: TaughtPayer[] = [];
  private seq = 0;

  order(id: string): LedgerOrder {
    return this.orders.get(id)!;
  }

  addOrder(order: Pick<LedgerOrder, 'id' | 'amount' | 'payerName' | 'account'>, at: number, random: Random): void {
    const held = new Set(
      [...this.orders.values()].filter((o) => o.account === order.account && o.status === 'open' && o.closed === null).map((o) => o.transferCode!),
    );
    this.orders.set(order.id, {
      ...order,
      seq: ++this.seq,
      status: 'open',
      orderedAt: new Date(at),
      expiresAt: new Date(at + ORDER_LIFETIME),
      transferCode: freeTransferCode(held, random),
      closed: null,
    });
  }

  addDeposit(deposit: Omit<LedgerDeposit, 'id' | 'seq' | 'status'>): LedgerDeposit {
    const stored: LedgerDeposit = { ...deposit, id: `txn_${this.deposits.length}`, seq: ++this.seq, status: 'unmatched' };
    this.deposits.push(stored);
    return stored;
  }

  /** Decides a deposit on the ledger as it stands, as the matcher would, and applies the decision. */
  decide(deposit: LedgerDeposit, options: StreamOptions): Decision {
    const now = deposit.occurredAt.getTime();
    for (const order of this.orders.values()) if (order.status === 'open' && order.closed === null && order.expiresAt.getTime() < now) order.status = 'expired';
    const candidates = this.amountCandidates(deposit);
    const code = transferCodeOf(deposit.counterparty);
    const codeOrder = code === undefined || candidates.some((o) => o.transferCode === code) ? undefined : this.orderWithCode(deposit.account, code);
    const name = normaliseName(deposit.counterparty);
    const twin = this.deposits.find(
      (d) =>
        d.account === deposit.account &&
        d.seq < deposit.seq &&
        d.amount === deposit.amount &&
        tokyoDay(d.occurredAt.getTime()) === tokyoDay(now) &&
        normaliseName(d.counterparty) === name,
    );
    const decision = decideUnderRules(
      options.rules,
      options.readings,
      {
        facts: { amount: deposit.amount, counterparty: deposit.counterparty, occurredAt: deposit.occurredAt, transferCode: code, duplicateOf: twin?.id },
        context: {
          ...(codeOrder === undefined ? {} : { codeOrder }),
          nearAmountOrders: this.nearAmountOrders(deposit.account, deposit.amount),
          ...(deposit.account === SHARED ? {} : { dedicatedAccount: this.dedicatedAccount(deposit.account) }),
        },
        payers: new PayerMemory(this.taught),
      },
      { orders: candidates, read: { allOpenOrdersRead: true } },
      deposit.occurredAt,
    );
    deposit.status = decision.outcome;
    if (decision.outcome === 'confirmed') this.order(decision.orderId).closed = 'paid';
    return decision;
  }

  /** The seller's pass over what waits for a person, at `at`. */
  settleAll(at: number): void {
    for (const deposit of this.deposits) {
      if (deposit.status !== 'held' && deposit.status !== 'unmatched') continue;
      const order = 'orderId' in deposit.truth ? this.order(deposit.truth.orderId) : undefined;
      if (deposit.truth.kind === 'payment' && order !== undefined && order.closed === null) {
        order.closed = 'paid';
        deposit.status = 'confirmed';
        const key = depositorKey(deposit.counterparty);
        if (key !== '') this.taught.push({ depositorKey: key, payerKey: payerKey(order.payerName) });
      } else {
        if (deposit.truth.kind === 'fee' && order !== undefined && order.closed === null) order.closed = 'paid_outside';
        deposit.status = 'excluded';
      }
    }
    // Orders past their deadline and never paid are canceled: the buyer is not coming.
    for (const order of this.orders.values()) if (order.closed === null && order.expiresAt.getTime() < at) order.closed = 'canceled';
  }

  private amountCandidates(deposit: LedgerDeposit): CandidateOrder[] {
    const ofAmount = [...this.orders.values()].filter(
      (o) => o.account === deposit.account && o.closed === null && o.amount === deposit.amount && o.orderedAt <= deposit.occurredAt,
    );
    const expired = ofAmount.filter((o) => o.status === 'expired').slice(-EXPIRED_READ);
    return [...ofAmount.filter((o) => o.status === 'open'), ...expired].sort((a, b) => a.seq - b.seq);
  }

  private orderWithCode(account: string, code: string): OtherOrder | undefined {
    const holders = [...this.orders.values()].filter((o) => o.account === account && o.transferCode === code);
    const order = holders.find((o) => o.status === 'open' && o.closed === null) ?? holders.at(-1);
    return order === undefined ? undefined : { id: order.id, status: order.closed ?? order.status, amount: order.amount, payerName: order.payerName };
  }

  /** A buyer's dedicated account: theirs for good, with their latest order. */
  private dedicatedAccount(account: string): DedicatedAccountFacts {
    const last = [...this.orders.values()].filter((o) => o.account === account).at(-1);
    return {
      customerReference: account,
      ...(last === undefined ? {} : { lastOrder: { id: last.id, status: last.closed ?? last.status, amount: last.amount } }),
    };
  }

  private nearAmountOrders(account: string, amount: number): OtherOrder[] {
    const { min, max } = nearAmountRange(amount);
    return [...this.orders.values()]
      .filter((o) => o.account === account && o.status === 'open' && o.closed === null && o.amount !== amount && o.amount >= min && o.amount <= max)
      .sort((a, b) => Math.abs(a.amount - amount) - Math.abs(b.amount - amount))
      .slice(0, NEAR_READ)
      .map((o) => ({ id: o.id, status: 'open', amount: o.amount, payerName: o.payerName }));
  }
}

function emptyFigures(month: number): MonthFigures {
  return {
    month,
    deposits: 0,
    payable: 0,
    confirmedAutomatically: 0,
    leftToPerson: 0,
    amountDiffers: 0,
    notForAnyOrder: 0,
    reportedTwice: 0,
    wrongConfirmations: 0,
    leftBecause: {},
  };
}

function count(figures: MonthFigures, deposit: LedgerDeposit, decision: Decision): void {
  figures.deposits += 1;
  const { truth } = deposit;
  const right = decision.outcome === 'confirmed' && truth.kind === 'payment' && truth.orderId === decision.orderId;
  if (decision.outcome === 'confirmed' && !right) figures.wrongConfirmations += 1;
  if (truth.kind === 'fee') figures.amountDiffers += 1;
  if (truth.kind === 'other') figures.notForAnyOrder += 1;
  if (truth.kind === 'duplicate') figures.reportedTwice += 1;
  if (truth.kind !== 'payment') return;
  figures.payable += 1;
  if (right) {
    figures.confirmedAutomatically += 1;
    return;
  }
  figures.leftToPerson += 1;
  const reason = decision.explanation.reason;
  figures.leftBecause[reason] = (figures.leftBecause[reason] ?? 0) + 1;
}
