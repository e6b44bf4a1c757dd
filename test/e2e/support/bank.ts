import { type AdapterCredentials, type TestSystem, adapterHeaders, api, type ApiResponse } from '@pmatch/testkit';

/** A bank adapter's request to bank-ingest: named by its id, signed as Standard Webhooks over the raw bytes (`adapterHeaders`). */
export async function signedPost(
  system: TestSystem,
  path: string,
  adapter: AdapterCredentials,
  body: string | Uint8Array,
  contentType = 'application/json',
): Promise<ApiResponse> {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  const res = await fetch(`${system.url('bank-ingest')}${path}`, {
    method: 'POST',
    headers: { 'content-type': contentType, ...adapterHeaders(adapter, bytes) },
    body: bytes,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: the test sees the text.
  }
  return { status: res.status, headers: res.headers, body: parsed as any };
}

export const notify = (system: TestSystem, adapter: AdapterCredentials, notification: Record<string, unknown>) =>
  signedPost(system, '/ingest/v1/notifications', adapter, JSON.stringify(notification));
/** A live account of the organisation, as `ops bank-account add` makes it. */
export async function liveAccount(
  system: TestSystem,
  orgId: string,
  fields: { bank?: string; branch?: string; type?: string; number: string; holder?: string },
): Promise<string> {
  return String((await system.addLiveBankAccount(orgId, fields)).id);
}

export { api };
