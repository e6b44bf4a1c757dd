import type { Mode } from '@pmatch/contracts';
import { modeOf, type ApiKeyRow, type OrganisationRow } from '@pmatch/db';

/** What the CLI prints, in the API's snake_case style. Bank accounts reuse @pmatch/db's bankAccountView. */

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
export interface IssuedApiKeyView {
  id: string;
  object: 'api_key';
  key: string;
  name: string;
  mode: Mode;
  permission: string;
  bank_account_id: string | null;
  organisation_id: string;
  created_at: string;
}

export function issuedApiKeyView(row: ApiKeyRow, keyText: string): IssuedApiKeyView {
  return {
    id: row.id,
    object: 'api_key',
    key: keyText,
    name: row.name,
    mode: modeOf(row),
    permission: row.permission,
    bank_account_id: row.bankAccountId,
    organisation_id: row.organisationId,
    created_at: row.createdAt.toISOString(),
  };
}

export interface RevokedApiKeyView {
  id: string;
  revoked_at: string;
}
