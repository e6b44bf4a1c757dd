import { buildIngestOpenApiDocument, buildOpenApiDocument } from '@pmatch/contracts';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * Checks API responses against the OpenAPI document, so every end-to-end test also proves the
 * document tells the truth. The document is the one the API serves at /v1/openapi.json, loaded by
 * `TestSystem.start` (what merchants read is what is checked); before a system runs, the one
 * generated from the contracts, which the service serves too. bank-ingest's answers are checked
 * against its own document, generated from the contracts.
 */
interface Validator {
  document: { paths?: Record<string, unknown> } & Record<string, unknown>;
  ajv: Ajv2020;
  routes: { template: string; pattern: RegExp }[];
  compiled: Map<string, ValidateFunction>;
}

function validatorOf(document: Validator['document']): Validator {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document as object, 'openapi');
  const routes = Object.keys(document.paths ?? {}).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  return { document, ajv, routes, compiled: new Map() };
}

let validator = validatorOf(buildOpenApiDocument('http://localhost') as unknown as Validator['document']);
const ingestValidator = validatorOf(buildIngestOpenApiDocument('http://localhost') as unknown as Validator['document']);

/** The validator of the API a path belongs to. */
const validatorFor = (path: string) => (path.startsWith('/ingest/') ? ingestValidator : validator);

/** From now on, checks responses against the document the API at `baseUrl` serves. */
export async function useServedDocument(baseUrl: string): Promise<void> {
  const res = await fetch(`${baseUrl}/v1/openapi.json`);
  if (res.status !== 200) throw new Error(`GET /v1/openapi.json answered ${res.status}`);
  validator = validatorOf((await res.json()) as Validator['document']);
}

/** The document responses are checked against now. */
export function documentInUse(): unknown {
  return validator.document;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export function documentedRoute(path: string): string | undefined {
  const pathname = path.split('?')[0]!;
  return validatorFor(pathname).routes.find((r) => r.pattern.test(pathname))?.template;
}

/** Throws when a /v1 or /ingest/v1 response does not match what its document promises for its status. */
export function assertDocumentedResponse(method: string, path: string, status: number, body: unknown): void {
  const validator = validatorFor(path);
  const template = documentedRoute(path);
  const operation =
    template === undefined
      ? undefined
      : (validator.document.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)[template]?.[method.toLowerCase()];
  let ref: string;
  if (operation === undefined || template === undefined) {
    // An endpoint that does not exist answers with the error body; anything else must be documented.
    if (status < 400) throw new Error(`${method} ${path} is not in the OpenAPI document`);
    ref = 'openapi#/components/schemas/Error';
  } else {
    const responseKey = String(status) in operation.responses ? String(status) : 'default';
    if (status < 400 && responseKey === 'default') throw new Error(`${method} ${template} does not document status ${status}`);
    ref = `openapi#/${pointer('paths', template, method.toLowerCase(), 'responses', responseKey, 'content', 'application/json', 'schema')}`;
  }
  let validate = validator.compiled.get(ref);
  if (validate === undefined) {
    validate = validator.ajv.compile({ $ref: ref });
    validator.compiled.set(ref, validate);
  }
  if (!validate(body)) {
    throw new Error(
      `${method} ${path} → ${status} does not match the OpenAPI document: ${validator.ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
}
