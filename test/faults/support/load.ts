import { randomUUID } from 'node:crypto';
import { adapterHeaders, type AdapterCredentials, type TestSystem } from '@pmatch/testkit';

/**
 * A bounded load of live orders and signed bank notifications, as a merchant's server and a bank
 * adapter send them: each request is retried (after errors, 5xx, timeouts) until it is answered
 * 2xx or its deadline passes, the way real clients behave while services restart. Requests take
 * turns over the replicas of orders-api and of bank-ingest, as a load balancer spreads them, so an
 * attempt a killed replica failed is retried on another. Every scenario has amounts of its own, so
 * its expected decision does not depend on the others.
 */

export type ScenarioKind = 'confirm' | 'hold' | 'unmatched' | 'double';

/** Half-width katakana as banks send it; payer names are registered the same, so the fit is exact. */
export const PAYER = 'ﾔﾏﾀﾞ ﾀﾛｳ';
const MINUTE = 60_000;

export interface Notification {
  bankReference: string;
  bankAccountId: string;
  amount: number;
  /** Every attempt: the HTTP status, or 0 when no answer came (refused, reset, timed out). */
  attempts: number[];
  /** The transaction id of the first 2xx answer; undefined if none came before the deadline. */
  transactionId?: string;
  /** Transaction ids of every 2xx answer, the same notification sent again after a 2xx included. */
  answeredIds: string[];
  /** A 4xx that is not a fault's doing (anything but 408/429): the request was refused as such. */
  refused?: { status: number; body: unknown };
}

export interface Scenario {
  index: number;
  kind: ScenarioKind;
  amount: number;
  bankAccountId: string;
  orderIds: string[];
  /**
   * An order could not be created (refused with a 4xx, or no 2xx before the deadline): the
   * scenario sends no notification, and the run fails (invariants.ts, abandonedScenarios).
   */
  abandoned: boolean;
  /** Why the order was not created: the last answer (status 0: no answer came). */
  orderFailure?: { status: number; body: unknown };
  notifications: Notification[];
}

export interface LoadOptions {
  /** Scenarios started per second. */
  rate: number;
  /** Scenarios in flight at most: bounds the load while services are down and requests retry. */
  maxInFlight: number;
  /** Notifications to send at least (once the faults are over, the load stops after this many). */
  minNotifications: number;
  /** Notifications to send at most, however long the faults last. */
  maxNotifications: number;
  /** How long one request is retried before the client gives up on it. */
  requestDeadlineMs: number;
}

export interface LoadTarget {
  liveKey: string;
  bankAccountIds: string[];
  adapter: AdapterCredentials;
}

interface Answer {
  status: number;
  body: any;
}

const KIND_BY_SLOT: ScenarioKind[] = [
  ...Array<ScenarioKind>(10).fill('confirm'),
  ...Array<ScenarioKind>(4).fill('hold'),
  ...Array<ScenarioKind>(3).fill('unmatched'),
  ...Array<ScenarioKind>(3).fill('double'),
];

export class LoadGenerator {
  readonly scenarios: Scenario[] = [];
  /**
   * Every 500 answer. A fault may make a request fail, but then the answer says "retry" (503, or no
   * answer at all): a 500 means an error we did not recognise as the fault's doing.
   */
  readonly internalErrors: { path: string; body: unknown }[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private notificationsLaunched = 0;
  private faultsOver = false;
  private loop: Promise<void> | undefined;
  /** Requests sent so far to each service: whose turn it is among its replicas. */
  private readonly sent = { 'orders-api': 0, 'bank-ingest': 0 };

  constructor(
    private readonly system: TestSystem,
    private readonly target: LoadTarget,
    private readonly options: LoadOptions,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  /** Notifications answered 2xx so far: progress, for waiting until the system serves again. */
  answered(): number {
    return this.notifications().filter((n) => n.transactionId !== undefined).length;
  }

  notifications(): Notification[] {
    return this.scenarios.flatMap((s) => s.notifications);
  }

  /** The faults are over: stop once enough notifications went out, and resolve when the last scenario has finished. */
  async finish(): Promise<void> {
    this.faultsOver = true;
    await this.loop;
  }

  private async run(): Promise<void> {
    const intervalMs = 1000 / this.options.rate;
    let next = Date.now();
    while (!this.done()) {
      if (this.inFlight.size < this.options.maxInFlight) {
        const work = this.scenario(this.scenarios.length);
        this.inFlight.add(work);
        void work.finally(() => this.inFlight.delete(work));
      }
      // Pacing, not waiting for an outcome: the load has a fixed rate.
      next += intervalMs;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())));
    }
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private done(): boolean {
    if (this.notificationsLaunched >= this.options.maxNotifications) return true;
    return this.faultsOver && this.notificationsLaunched >= this.options.minNotifications;
  }

  private async scenario(index: number): Promise<void> {
    const kind = KIND_BY_SLOT[index % KIND_BY_SLOT.length]!;
    const scenario: Scenario = {
      index,
      kind,
      amount: 10_000 + index,
      bankAccountId: this.target.bankAccountIds[index % this.target.bankAccountIds.length]!,
      orderIds: [],
      abandoned: false,
      notifications: [],
    };
    this.scenarios.push(scenario);
    const orders = kind === 'hold' ? 2 : kind === 'unmatched' ? 0 : 1;
    const deposits = kind === 'double' ? 2 : 1;
    this.notificationsLaunched += deposits;
    for (let i = 0; i < orders; i += 1) {
      const answer = await this.createOrder(scenario, i);
      if (!answer.ok) {
        scenario.abandoned = true;
        scenario.orderFailure = { status: answer.status, body: answer.body };
        return;
      }
      scenario.orderIds.push(String(answer.body.id));
    }
    await Promise.all(Array.from({ length: deposits }, () => this.notify(scenario)));
  }

  private async createOrder(scenario: Scenario, n: number): Promise<Answer & { ok: boolean }> {
    const body = {
      amount: scenario.amount,
      payer_name: PAYER,
      external_id: `fault-${scenario.index}-${n}`,
      item_name: 'お米 5kg',
      bank_account_id: scenario.bankAccountId,
      ordered_at: new Date(this.system.now().getTime() - 10 * MINUTE).toISOString(),
    };
    // A key left "in progress" by a killed orders-api is locked for a minute; external_id makes
    // the retry without it safe (the same content gives the existing order).
    let idempotencyKey: string | undefined = randomUUID();
    const keyInUse = (a: Answer) => a.status === 409 && a.body?.error?.code === 'idempotency_key_in_use';
    // Any other 4xx (a 400, an external_id_conflict) is a refusal no fault explains: not retried.
    return this.untilAnswered(
      () =>
        this.send(this.next('orders-api'), '/v1/orders', JSON.stringify(body), {
          authorization: `Bearer ${this.target.liveKey}`,
          ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
        }),
      (a) => {
        if (keyInUse(a)) idempotencyKey = undefined;
      },
      (a) => keyInUse(a) || a.status === 429,
    );
  }

  private async notify(scenario: Scenario): Promise<void> {
    const notification: Notification = {
      bankReference: `fault-${scenario.index}-${randomUUID()}`,
      bankAccountId: scenario.bankAccountId,
      amount: scenario.amount,
      attempts: [],
      answeredIds: [],
    };
    scenario.notifications.push(notification);
    const body = JSON.stringify({
      bank_account_id: scenario.bankAccountId,
      bank_reference: notification.bankReference,
      direction: 'deposit',
      amount: scenario.amount,
      counterparty: PAYER,
      occurred_at: new Date(this.system.now().getTime() - MINUTE).toISOString(),
    });
    // The same bank reference on every attempt, as a bank resends what it has not seen answered.
    const answer = await this.untilAnswered(
      () => this.sendSigned(body),
      (a) => notification.attempts.push(a.status),
      (a) => a.status === 408 || a.status === 429,
    );
    if (!answer.ok) {
      if (answer.status >= 400 && answer.status < 500) notification.refused = { status: answer.status, body: answer.body };
      return;
    }
    notification.transactionId = String(answer.body.transaction_id);
    notification.answeredIds.push(notification.transactionId);
    // Banks send a notification again when they missed our answer: every fourth is sent twice.
    if (scenario.index % 4 === 0) {
      const again = await this.sendSigned(body);
      notification.attempts.push(again.status);
      if (again.status >= 200 && again.status < 300) notification.answeredIds.push(String(again.body?.transaction_id));
    }
  }

  private sendSigned(body: string): Promise<Answer> {
    return this.send(this.next('bank-ingest'), '/ingest/v1/notifications', body, adapterHeaders(this.target.adapter, body, { at: this.system.now() }));
  }

  /** The URL of the service's replica whose turn it is. */
  private next(service: 'orders-api' | 'bank-ingest'): string {
    const turn = this.sent[service]++;
    return this.system.url(service, 1 + (turn % this.system.replicas(service)));
  }

  /**
   * Retries a request until it is answered 2xx or refused as such (a 4xx that `retryable4xx` does
   * not name), or the deadline passes. No answer and 5xx are always retried. Resolves with the last
   * answer.
   */
  private async untilAnswered(
    attempt: () => Promise<Answer>,
    seen: (a: Answer) => void,
    retryable4xx: (a: Answer) => boolean,
  ): Promise<Answer & { ok: boolean }> {
    const deadline = Date.now() + this.options.requestDeadlineMs;
    let backoffMs = 50;
    for (;;) {
      const answer = await attempt();
      seen(answer);
      if (answer.status >= 200 && answer.status < 300) return { ...answer, ok: true };
      const retryable = answer.status === 0 || answer.status >= 500 || retryable4xx(answer);
      if (!retryable || Date.now() > deadline) return { ...answer, ok: false };
      await new Promise((resolve) => setTimeout(resolve, backoffMs));
      backoffMs = Math.min(backoffMs * 2, 1_000);
    }
  }

  private async send(baseUrl: string, path: string, body: string, headers: Record<string, string>): Promise<Answer> {
    try {
      const res = await fetch(`${baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Not JSON (a proxy or a dying process): kept as text for the report.
      }
      if (res.status === 500) this.internalErrors.push({ path, body: parsed });
      return { status: res.status, body: parsed };
    } catch (error) {
      return { status: 0, body: String(error) };
    }
  }
}
