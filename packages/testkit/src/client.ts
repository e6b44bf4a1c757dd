import { assertDocumentedResponse } from './openapi-validator';

/**
 * A minimal JSON client for the API under test: status, headers and parsed body, nothing hidden.
 * Every JSON answer of a /v1 or /ingest/v1 endpoint is checked against its OpenAPI document.
 */
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export async function api<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: tests see the raw text.
  }
  const documented = (path.startsWith('/v1/') && !path.startsWith('/v1/openapi.json')) || path.startsWith('/ingest/v1/');
  if (documented && res.headers.get('content-type')?.startsWith('application/json')) {
    assertDocumentedResponse(method, path, res.status, parsed);
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}
