import { AppError, BANK_ADAPTER_ID_HEADER, idPattern } from '@pmatch/contracts';
import type { PrismaClient } from '@pmatch/db';
import type { Request, RequestHandler, Response } from 'express';
import { boundAccount, signedBy, type AccountReference, type Adapter, type BoundAccount, type SignatureHeaders } from '../domain/adapter-auth';
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

/**
 * Before a body is read: the request names its adapter in the `bank-adapter-id` header and that
 * adapter is active, and it carries the Standard Webhooks headers; otherwise 401
 * `invalid_api_key`, one answer for a missing, unknown or revoked adapter id, with the connection
 * closed so the body is not drained. The adapter goes to `res.locals.adapter` (`namedAdapterOf`).
 */
export function namedAdapter(adapters: AdapterCache): RequestHandler {
  return async (req, res, next) => {
    try {
      const id = req.get(BANK_ADAPTER_ID_HEADER);
      if (id === undefined) throw new AppError('invalid_api_key', `Missing ${BANK_ADAPTER_ID_HEADER} header; name your bank adapter in it.`);
      signatureHeaders(req);
      const adapter = idPattern('adapter').test(id) ? await adapters.named(id) : undefined;
      if (adapter === undefined) throw new AppError('invalid_api_key', `The ${BANK_ADAPTER_ID_HEADER} header names no active bank adapter.`);
      res.locals.adapter = adapter;
    } catch (error) {
      res.setHeader('Connection', 'close');
      throw error;
    }
    next();
  };
}

/** The adapter `namedAdapter` found for this request (its signature not yet verified). */
export function namedAdapterOf(res: Response): Adapter {
  return res.locals.adapter as Adapter;
}

/** That the adapter the request names signed its whole body, in `req.rawBody`; else 401. */
export function verifySignature(req: Request, adapter: Adapter): void {
  const { id, timestamp, signature } = signatureHeaders(req);
  const signed = {
    rawBody: req.rawBody?.toString('utf8') ?? '',
    headers: { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature },
  };
  if (!signedBy(adapter, signed)) throw new AppError('invalid_api_key', 'The signature is not valid.');
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
