import { buildOpenApiDocument } from '@pmatch/contracts';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * Checks API responses against the OpenAPI document generated from the contracts, so every
 * end-to-end test also proves the document tells the truth.
 */
const document = buildOpenApiDocument('http://localhost');
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(document as object, 'openapi');

const routes = Object.keys(document.paths ?? {}).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));
const compiled = new Map<string, ValidateFunction>();

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export function documentedRoute(path: string): string | undefined {
  const pathname = path.split('?')[0]!;
  return routes.find((r) => r.pattern.test(pathname))?.template;
}

/** Throws when a /v1 response does not match what the document promises for its status. */
export function assertDocumentedResponse(method: string, path: string, status: number, body: unknown): void {
  const template = documentedRoute(path);
  const operation =
    template === undefined
      ? undefined
      : (document.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)[template]?.[method.toLowerCase()];
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
  let validate = compiled.get(ref);
  if (validate === undefined) {
    validate = ajv.compile({ $ref: ref });
    compiled.set(ref, validate);
  }
  if (!validate(body)) {
    throw new Error(`${method} ${path} → ${status} does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`);
  }
}
