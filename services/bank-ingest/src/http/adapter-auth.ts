import { AppError } from '@pmatch/contracts';
import type { PrismaClient } from '@pmatch/db';
import type { Request } from 'express';
import { boundAccount, findSigningAdapter, type AccountReference, type Adapter, type BoundAccount, type SignatureHeaders } from '../domain/adapter-auth';
import { readBoundAccount, type AdapterCache } from '../data/adapters';

const SIGNATURE_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/** The Standard Webhooks headers of a request, or 401 when one is missing. */
export function signatureHeaders(req: Request): SignatureHeaders {
  const [id, timestamp, signature] = SIGNATURE_HEADERS.map((name) => {
    const value = req.get(name);
    if (value === undefined) throw new AppError('invalid_api_key', `Missing ${name} header; requests must be signed.`);
    return value;
  });
  return { id: id!, timestamp: timestamp!, signature: signature! };
}

/** The adapter that signed a request whose whole body is in `req.rawBody`, or 401. */
export async function authenticateAdapter(req: Request, adapters: AdapterCache): Promise<Adapter> {
  const { id, timestamp, signature } = signatureHeaders(req);
  const signed = {
    rawBody: req.rawBody?.toString('utf8') ?? '',
    headers: { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature },
  };
  // A miss may re-read the adapters (at most once per interval), so a freshly created adapter works without waiting out the cache.
  let adapter = findSigningAdapter(await adapters.current(), signed);
  if (adapter === undefined) {
    const reread = await adapters.afterMiss();
    if (reread !== undefined) adapter = findSigningAdapter(reread, signed);
  }
  if (adapter === undefined) throw new AppError('invalid_api_key', 'The signature is not valid.');
  return adapter;
}

/**
 * The live account the reference names, if the adapter is bound to it; otherwise 403
 * `account_not_allowed`, whether or not such an account exists. An account the cached adapter
 * lacks is looked up once more in the database: a binding made a moment ago counts at once.
 */
export async function accountFor(prisma: PrismaClient, adapter: Adapter, reference: AccountReference, param: string): Promise<BoundAccount> {
  const account = boundAccount(adapter, reference) ?? (await readBoundAccount(prisma, adapter.id, reference));
  if (account === undefined || account.mode !== 'live') {
    throw new AppError('account_not_allowed', 'This adapter is not bound to that bank account.', { param });
  }
  return account;
}
