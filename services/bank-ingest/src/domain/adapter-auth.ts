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
 * Whether the adapter's secret signed the request (Standard Webhooks: id, timestamp within
 * 5 minutes, HMAC over the raw body, constant-time comparison inside the library). Only the
 * adapter the request names is tried: no other adapter's secret is ever compared.
 */
export function signedBy(adapter: Adapter, request: SignedRequest): boolean {
  try {
    new Webhook(adapter.secret).verify(request.rawBody, request.headers, { jsonParse: false });
    return true;
  } catch {
    // Another secret's signature, a stale or malformed one.
    return false;
  }
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
 * Standard Webhooks verification over a body that arrives in chunks: one HMAC-SHA256 under the
 * named adapter's secret over `id.timestamp.` and the raw bytes, compared in constant time at the
 * end. (The library takes a whole string and decodes a Buffer as UTF-8, which changes Shift_JIS
 * bytes.) `fresh` is false when the timestamp is more than 5 minutes away from `nowMs`.
 */
export class StreamingSignatureCheck {
  private readonly hmac: ReturnType<typeof createHmac>;
  readonly fresh: boolean;

  constructor(
    private readonly headers: SignatureHeaders,
    private readonly adapter: Adapter,
    nowMs: number,
  ) {
    const timestamp = Number(headers.timestamp);
    this.fresh = /^[0-9]{1,12}$/.test(headers.timestamp) && Math.abs(nowMs / 1000 - timestamp) <= SIGNATURE_TOLERANCE_S;
    this.hmac = createHmac('sha256', secretKey(adapter.secret));
    this.hmac.update(`${headers.id}.${headers.timestamp}.`);
  }

  update(chunk: Uint8Array): void {
    this.hmac.update(chunk);
  }

  /** Whether the header carries the adapter's signature of every chunk given; call once, at the end. */
  verified(): boolean {
    if (!this.fresh) return false;
    const expected = this.hmac.digest();
    return this.headers.signature
      .split(' ')
      .map((part) => part.split(','))
      .filter(([version, value]) => version === 'v1' && value !== undefined)
      .map(([, value]) => Buffer.from(value!, 'base64'))
      .some((signature) => signature.length === expected.length && timingSafeEqual(signature, expected));
  }
}

/** A `whsec_…` secret's key bytes. */
function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}
