import type { BankAccount, Mode } from '@pmatch/contracts';
import { bankAccountObject, modeOf, type ApiKeyRow, type BankAccountRow, type OrganisationRow, type UserRow } from '@pmatch/db';

/** What the CLI prints, in the API's snake_case style. Bank accounts build on @pmatch/db's bankAccountObject. */

export interface OrganisationView {
  id: string;
  object: 'organisation';
  name: string;
  owner_email: string;
  created_at: string;
}

export function organisationView(row: OrganisationRow): OrganisationView {
  return {
    id: row.id,
    object: 'organisation',
    name: row.name,
    owner_email: row.ownerEmail,
    created_at: row.createdAt.toISOString(),
  };
}

/** Carries the key text, which exists only in this one output: the database keeps its hash. */
/** A key just issued: its text, printed this once, and what identifies it. */
export type IssuedApiKeyView = Omit<ApiKeyView, 'key_hint' | 'revoked_at' | 'last_used_at'> & { key: string };

export function issuedApiKeyView(row: ApiKeyRow, keyText: string): IssuedApiKeyView {
  const { key_hint: _hint, revoked_at: _revoked, last_used_at: _used, ...key } = apiKeyView(row);
  return { ...key, key: keyText };
}

export interface RevokedApiKeyView {
  id: string;
  revoked_at: string;
}

/** An API key as `key get` and `key list` print it: the hint, never the text or its hash. */
export interface ApiKeyView {
  id: string;
  object: 'api_key';
  key_hint: string;
  name: string;
  mode: Mode;
  permission: string;
  bank_account_id: string | null;
  organisation_id: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

export function apiKeyView(row: Omit<ApiKeyRow, 'keyHash'>): ApiKeyView {
  return {
    id: row.id,
    object: 'api_key',
    key_hint: row.keyHint,
    name: row.name,
    mode: modeOf(row),
    permission: row.permission,
    bank_account_id: row.bankAccountId,
    organisation_id: row.organisationId,
    created_at: row.createdAt.toISOString(),
    revoked_at: row.revokedAt?.toISOString() ?? null,
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
  };
}

/** The API's bank account (the number's last 4 digits only) and the organisation it belongs to. */
export type OperatorBankAccountView = BankAccount & { organisation_id: string };

export function operatorBankAccountView(row: BankAccountRow): OperatorBankAccountView {
  return { ...bankAccountObject(row), organisation_id: row.organisationId };
}

/** A person of the seller console: whether a password and a second factor are set, never either. */
export interface UserView {
  id: string;
  object: 'user';
  organisation_id: string;
  email: string;
  role: string;
  password_set: boolean;
  /** When the one-time password-setup link stops working; null once used (or never issued). */
  password_setup_expires_at: string | null;
  totp_enabled: boolean;
  created_at: string;
}

export function userView(
  row: Pick<UserRow, 'id' | 'organisationId' | 'email' | 'role' | 'passwordHash' | 'passwordSetupExpiresAt' | 'totpEnabledAt' | 'createdAt'>,
): UserView {
  return {
    id: row.id,
    object: 'user',
    organisation_id: row.organisationId,
    email: row.email,
    role: row.role,
    password_set: row.passwordHash !== null,
    password_setup_expires_at: row.passwordSetupExpiresAt?.toISOString() ?? null,
    totp_enabled: row.totpEnabledAt !== null,
    created_at: row.createdAt.toISOString(),
  };
}
