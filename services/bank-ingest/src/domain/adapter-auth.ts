import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AccountType, BankAccountIdentity, Mode } from '@pmatch/contracts';
import { Webhook } from 'standardwebhooks';

/** A live bank account an adapter is bound to, with what storing its transactions needs. */
export interface BoundAccount {
  id: string;
  organisationId: string;
  mode: Mode;
  bankCode: string;
  branchCode: string;
  accountType: AccountType;
  accountNumber: string;
}

/** An active bank adapter: its opened signing secret and the only accounts it may write to. */
export interface Adapter {
  id: string;
  secret: string;
  accounts: BoundAccount[];
}

export interface SignedRequest {
  rawBody: string;
  headers: Record<string, string>;
}

/**
 * Finds the adapter whose secret signed the request (Standard Webhooks: id, timestamp within
 * 5 minutes, HMAC over the raw body, constant-time comparison inside the library).
 * Returns undefined when none did.
 */
export function findSigningAdapter(adapters: Adapter[], request: SignedRequest): Adapter | undefined {
  for (const adapter of adapters) {
    try {
      new Webhook(adapter.secret).verify(request.rawBody, request.headers, { jsonParse: false });
      return adapter;
    } catch {
      // Not this adapter's signature (or stale/malformed); try the next.
    }
  }
  return undefined;
}

/** How an incoming transaction names its account: our id, or the bank's identity of it. */
export type AccountReference = { bankAccountId: string } | { identity: BankAccountIdentity };

/** The adapter's bound account the reference names, or undefined: it may not write there. */
export function boundAccount(adapter: Adapter, reference: AccountReference): BoundAccount | undefined {
  if ('bankAccountId' in reference) return adapter.accounts.find((a) => a.id === reference.bankAccountId);
  const { bank_code, branch_code, account_type, account_number } = reference.identity;
  return adapter.accounts.find(
    (a) => a.bankCode === bank_code && a.branchCode === branch_code && a.accountType === account_type && a.accountNumber === account_number,
  );
}

/** Signatures older or newer than this are refused, as the Standard Webhooks library does. */
const SIGNATURE_TOLERANCE_S = 5 * 60;

/** The webhook-signature header's `v1,` signatures, for a body too large to verify in one piece. */
export interface SignatureHeaders {
  id: string;
  timestamp: string;
  signature: string;
}

/**
 * Standard Webhooks verification over a body that arrives in chunks: one HMAC-SHA256 per candidate
 * adapter over `id.timestamp.` and the raw bytes, compared in constant time at the end. (The
 * library takes a whole string and decodes a Buffer as UTF-8, which changes Shift_JIS bytes.)
 * `fresh` is false when the timestamp is more than 5 minutes away from `nowMs`.
 */
export class StreamingSignatureCheck {
  private readonly hmacs: { adapter: Adapter; hmac: ReturnType<typeof createHmac> }[];
  readonly fresh: boolean;

  constructor(
    private readonly headers: SignatureHeaders,
    adapters: Adapter[],
    nowMs: number,
  ) {
    const timestamp = Number(headers.timestamp);
    this.fresh = /^[0-9]{1,12}$/.test(headers.timestamp) && Math.abs(nowMs / 1000 - timestamp) <= SIGNATURE_TOLERANCE_S;
    this.hmacs = adapters.map((adapter) => {
      const hmac = createHmac('sha256', secretKey(adapter.secret));
      hmac.update(`${headers.id}.${headers.timestamp}.`);
      return { adapter, hmac };
    });
  }

  update(chunk: Uint8Array): void {
    for (const { hmac } of this.hmacs) hmac.update(chunk);
  }

  /** The adapter whose signature the header carries, once every chunk was given; else undefined. */
  signer(): Adapter | undefined {
    if (!this.fresh) return undefined;
    const given = this.headers.signature
      .split(' ')
      .map((part) => part.split(','))
      .filter(([version, value]) => version === 'v1' && value !== undefined)
      .map(([, value]) => Buffer.from(value!, 'base64'));
    for (const { adapter, hmac } of this.hmacs) {
      const expected = hmac.digest();
      if (given.some((signature) => signature.length === expected.length && timingSafeEqual(signature, expected))) return adapter;
    }
    return undefined;
  }
}

/** A `whsec_…` secret's key bytes. */
function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}
