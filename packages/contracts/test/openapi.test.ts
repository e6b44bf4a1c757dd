import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ERROR_CODES, EVENT_TYPES, OPERATIONS, buildIngestOpenApiDocument, buildOpenApiDocument, errorCodesOf, eventSchemaName, statusOfCode } from '../src';

const execFileAsync = promisify(execFile);
const LINT_SCRIPT = join(__dirname, '..', 'scripts', 'lint-openapi.mjs');

type Json = Record<string, any>;
const api = buildOpenApiDocument('https://api.pmatch.test') as Json;
const ingest = buildIngestOpenApiDocument('https://ingest.pmatch.test') as Json;
const METHODS = ['get', 'post', 'patch', 'delete'];

function operationsOf(document: Json): { where: string; operation: Json }[] {
  const found: { where: string; operation: Json }[] = [];
  for (const section of ['paths', 'webhooks']) {
    for (const [path, item] of Object.entries<Json>(document[section] ?? {})) {
      for (const method of METHODS) if (item[method]) found.push({ where: `${section} ${method} ${path}`, operation: item[method] });
    }
  }
  return found;
}

async function lint(...files: string[]): Promise<{ exitCode: number; problems: Record<string, { rule: string; severity: string }[]> }> {
  try {
    const { stdout } = await execFileAsync(process.execPath, [LINT_SCRIPT, ...files]);
    return { exitCode: 0, problems: JSON.parse(stdout) };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { exitCode: failed.code, problems: JSON.parse(failed.stdout) };
  }
}

describe('lint', () => {
  test("when both documents are linted with Redocly's recommended-strict rules, then no problem is found", async () => {
    const result = await lint();

    expect(result.problems).toEqual({ 'orders-api': [], 'bank-ingest': [] });
    expect(result.exitCode).toBe(0);
  });

  test('when a document breaks a rule, then the lint fails and names the rule', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    try {
      const broken = structuredClone(api);
      delete broken.paths['/v1/orders'].post.operationId;
      broken.paths['/v1/orders'].get.responses['200'].content['application/json'].example = { object: 'list', data: 'none', has_more: false };
      writeFileSync(join(dir, 'broken.json'), JSON.stringify(broken));

      const result = await lint(join(dir, 'broken.json'));

      expect(result.exitCode).toBe(1);
      expect(Object.values(result.problems)[0]!.map((p) => p.rule)).toEqual(
        expect.arrayContaining(['operation-operationId', 'no-invalid-media-type-examples']),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('examples', () => {
  /** Every example in a document with the schema it illustrates, found by walking the document. */
  function examplesOf(document: Json): { where: string; schema: Json; value: unknown }[] {
    const found: { where: string; schema: Json; value: unknown }[] = [];
    const visit = (node: unknown, where: string) => {
      if (node === null || typeof node !== 'object') return;
      const object = node as Json;
      if (object.schema !== undefined && 'example' in object) found.push({ where, schema: object.schema, value: object.example });
      if (object.schema !== undefined && object.examples !== undefined && !Array.isArray(object.examples)) {
        for (const [name, example] of Object.entries<Json>(object.examples))
          found.push({ where: `${where} (${name})`, schema: object.schema, value: example.value });
      }
      for (const [key, child] of Object.entries(object)) if (key !== 'schema' && key !== 'examples' && key !== 'example') visit(child, `${where}/${key}`);
    };
    visit(
      {
        paths: document.paths,
        webhooks: document.webhooks,
        components: { headers: document.components?.headers, parameters: document.components?.parameters },
      },
      '#',
    );
    return found;
  }

  test.each([
    ['orders-api', api],
    ['bank-ingest', ingest],
  ])('when every example of the %s document is validated against its schema, then each conforms', (_name, document) => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(document, 'openapi');
    const examples = examplesOf(document);

    const failures = examples.flatMap(({ where, schema, value }) => {
      const validate = ajv.compile(schemaWithDocumentRefs(schema));
      return validate(value) ? [] : [`${where}: ${ajv.errorsText(validate.errors)}`];
    });

    expect(failures).toEqual([]);
    expect(examples.length).toBeGreaterThan(operationsOf(document).length * 2);
  });

  test('when an example does not fit its schema, then the validation finds it', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema(api, 'openapi');
    const validate = ajv.compile({ $ref: 'openapi#/components/schemas/Order' });

    expect(validate({ ...api.paths['/v1/orders/{id}'].get.responses['200'].content['application/json'].example })).toBe(true);
    expect(validate({ ...api.paths['/v1/orders/{id}'].get.responses['200'].content['application/json'].example, amount: '5000' })).toBe(false);
  });

  test('when an operation takes a body or answers one, then it shows an example of each', () => {
    const missing = operationsOf(api).flatMap(({ where, operation }) => {
      const gaps: string[] = [];
      const body = operation.requestBody?.content?.['application/json'];
      if (body !== undefined && body.example === undefined) gaps.push(`${where}: request`);
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        const media = response.content?.['application/json'];
        if (media !== undefined && status !== 'default' && media.example === undefined && media.examples === undefined) gaps.push(`${where}: ${status}`);
      }
      return gaps;
    });

    expect(missing).toEqual([]);
  });
});

/** Rewrites the document's local refs (#/components/…) so a schema compiled on its own finds them. */
function schemaWithDocumentRefs(schema: unknown): Json {
  return JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"openapi#/'));
}

describe('what the document promises', () => {
  test('when any operation answers, then its Request-Id header is documented, and Retry-After on 429 and 503', () => {
    const gaps = operationsOf(api)
      .filter(({ where }) => where.startsWith('paths'))
      .flatMap(({ where, operation }) =>
        Object.entries<Json>(operation.responses).flatMap(([status, response]) => [
          ...(response.headers?.['Request-Id'] ? [] : [`${where} ${status}: Request-Id`]),
          ...((status === '429' || status === '503') && !response.headers?.['Retry-After'] ? [`${where} ${status}: Retry-After`] : []),
        ]),
      );

    expect(gaps).toEqual([]);
    expect(api.components.headers['Request-Id'].schema.pattern).toBe('^req_[0-9a-f]{32}$');
  });

  test('when an order is created, then Idempotency-Key is a documented parameter and Idempotent-Replayed a documented header', () => {
    const create = api.paths['/v1/orders'].post;

    expect(create.parameters).toEqual([{ $ref: '#/components/parameters/Idempotency-Key' }]);
    expect(api.components.parameters['Idempotency-Key']).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
    expect(create.responses['201'].headers['Idempotent-Replayed']).toEqual({ $ref: '#/components/headers/Idempotent-Replayed' });
    expect(create.responses['400'].content['application/json'].examples.idempotency_key_reused).toBeDefined();
    expect(create.responses['409'].content['application/json'].examples.idempotency_key_in_use).toBeDefined();
  });

  test('when an operation can answer an error code, then the code is listed under its status with an example', () => {
    for (const operation of OPERATIONS) {
      const responses = api.paths[operation.path][operation.method].responses;
      for (const code of errorCodesOf(operation)) {
        const media = responses[String(statusOfCode(code))]?.content['application/json'];
        expect({ operation: operation.operationId, code, listed: media?.schema.properties.error.properties.code.enum.includes(code) }).toEqual({
          operation: operation.operationId,
          code,
          listed: true,
        });
        expect(media.examples[code].value.error.code).toBe(code);
      }
    }
    const ingestCodes = Object.values(ingest.paths as Json)
      .flatMap((path: Json) => Object.values(path))
      .flatMap((operation: Json) => Object.values(operation.responses as Json))
      .flatMap((response: Json) => response.content?.['application/json']?.schema?.properties?.error?.properties?.code?.enum ?? []);
    const documented = new Set([...OPERATIONS.flatMap(errorCodesOf), ...ingestCodes]);
    expect(ERROR_CODES.filter((code) => !documented.has(code))).toEqual([]);
  });

  test("when an operation's error answers are read, then together they name exactly its own codes, its default answer too: a generated client narrows to them", () => {
    const codesIn = (schema: Json): string[] =>
      schema.allOf !== undefined ? schema.allOf.flatMap(codesIn) : (schema.properties?.error?.properties?.code?.enum ?? []);
    for (const operation of OPERATIONS) {
      const responses = api.paths[operation.path][operation.method].responses as Json;
      const answered = Object.entries<Json>(responses)
        .filter(([status]) => status === 'default' || Number(status) >= 400)
        .map(([status, response]) => [status, new Set(codesIn(response.content['application/json'].schema))] as const);
      const own = new Set(errorCodesOf(operation));

      expect({ operation: operation.operationId, codes: new Set(answered.flatMap(([, codes]) => [...codes])) }).toEqual({
        operation: operation.operationId,
        codes: own,
      });
      expect({ operation: operation.operationId, default: answered.find(([status]) => status === 'default')?.[1] }).toEqual({
        operation: operation.operationId,
        default: own,
      });
    }
    expect(api.paths['/v1/orders'].post.responses.default.content['application/json'].schema.allOf[0]).toEqual({ $ref: '#/components/schemas/Error' });
  });

  test('when events are listed or created endpoints read, then webhook.test is neither listed nor a filter, and a new endpoint always shows its secret', () => {
    const listEvents = api.paths['/v1/events'].get;
    const typeFilter = listEvents.parameters.find((p: Json) => p.name === 'type');
    expect(typeFilter.schema.enum).toEqual(EVENT_TYPES.filter((t) => t !== 'webhook.test'));
    const listed = listEvents.responses['200'].content['application/json'].schema;
    expect(api.components.schemas[listed.$ref.split('/').at(-1)].properties.data.items).toEqual({ $ref: '#/components/schemas/RecordedEvent' });
    expect(api.components.schemas.RecordedEvent.oneOf.map((s: Json) => s.$ref)).not.toContain('#/components/schemas/WebhookTestEvent');
    expect(api.components.schemas.RecordedEvent.oneOf).toHaveLength(EVENT_TYPES.length - 1);

    const created = api.paths['/v1/webhook-endpoints'].post.responses['201'].content['application/json'].schema;
    expect(created).toEqual({ $ref: '#/components/schemas/CreatedWebhookEndpoint' });
    expect(JSON.stringify(api.components.schemas.CreatedWebhookEndpoint)).toMatch(/"required":\["secret"\]/);
    expect(api.components.schemas.WebhookEndpoint.properties.secret).toBeUndefined();
  });

  test("when webhooks are read, then every event type has one whose body is that type's event", () => {
    expect(Object.keys(api.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const body = api.webhooks[type].post.requestBody.content['application/json'];
      expect(body.schema).toEqual({ $ref: `#/components/schemas/${eventSchemaName(type)}` });
      expect(body.example.type).toBe(type);
      expect(api.webhooks[type].post.parameters.map((p: Json) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    }
  });

  test('when the bank-ingest document is read, then it is its own document of the notification and statement endpoints only', () => {
    expect(Object.keys(ingest.paths)).toEqual(['/ingest/v1/notifications', '/ingest/v1/statements']);
    expect(Object.keys(ingest.paths['/ingest/v1/notifications'].post.responses)).toEqual(
      expect.arrayContaining(['200', '202', '400', '401', '403', '413', '503']),
    );
    expect(Object.keys(ingest.paths['/ingest/v1/statements'].post.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '413', '422', '503']));
    expect(ingest.webhooks ?? {}).toEqual({});
    expect(Object.keys(api.paths).some((path) => path.startsWith('/ingest'))).toBe(false);
  });

  test('when a bank-ingest operation is read, then it requires the adapter to name itself in bank-adapter-id beside the three signature headers', () => {
    for (const path of ['/ingest/v1/notifications', '/ingest/v1/statements']) {
      const headers = (ingest.paths[path].post.parameters as Json[]).filter((p) => p.in === 'header');
      expect(headers.map((p) => [p.name, p.required])).toEqual([
        ['bank-adapter-id', true],
        ['webhook-id', true],
        ['webhook-timestamp', true],
        ['webhook-signature', true],
      ]);
    }
  });
});

describe("coverage of the services' routes", () => {
  const ROUTE = /\.(get|post|patch|delete)\(\s*(['`])(\/(?:v1|ingest\/v1)\/[^'`]*)\2/g;

  /** `METHOD /path` of every route a service's source mounts, `:id` as `{id}`, `${…}` as `{*}`. */
  function routesOf(service: string): string[] {
    const dir = join(__dirname, '..', '..', '..', 'services', service, 'src');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    return files.flatMap((file) =>
      [...readFileSync(join(dir, file), 'utf8').matchAll(ROUTE)].map(
        ([, method, , path]) => `${method!.toUpperCase()} ${path!.replace(/:([a-z_]+)/g, '{$1}').replace(/\$\{[^}]+\}/g, '{*}')}`,
      ),
    );
  }

  const documented = (document: Json) =>
    Object.entries<Json>(document.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${path}`));
  /** Whether a route serves an operation: the same method and segments, `{*}` standing for any one segment. */
  const matches = (route: string, operation: string) => {
    const [routeMethod, routePath] = route.split(' ');
    const [method, path] = operation.split(' ');
    const routeSegments = routePath!.split('/');
    const segments = path!.split('/');
    return routeMethod === method && routeSegments.length === segments.length && routeSegments.every((s, i) => s === '{*}' || s === segments[i]);
  };

  test.each([
    ['orders-api', api],
    ['bank-ingest', ingest],
  ])("when %s's routes are read from its source, then each is documented and each documented operation has a route", (service, document) => {
    const routes = routesOf(service).filter((r) => !r.endsWith(' /v1/openapi.json'));
    const operations = documented(document);

    expect(routes.length).toBeGreaterThan(0);
    expect(routes.filter((route) => !operations.some((operation) => matches(route, operation)))).toEqual([]);
    expect(operations.filter((operation) => !routes.some((route) => matches(route, operation)))).toEqual([]);
  });
});
