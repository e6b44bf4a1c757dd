import { API_KEY_PATTERN, type Mode } from '@pmatch/contracts';

/** Who is calling: resolved from the API key on every /v1 request. */
export interface AuthContext {
  keyId: string;
  organisationId: string;
  mode: Mode;
  permission: 'read_write' | 'read_only';
  /** A live key may be limited to one bank account. */
  bankAccountId: string | null;
}

/** The key text of an `Authorization: Bearer <key>` header, or undefined when malformed. */
export function bearerKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer ([^\s]+)$/.exec(header.trim());
  const key = match?.[1];
  return key !== undefined && API_KEY_PATTERN.test(key) ? key : undefined;
}

export const WRITE_METHODS = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
