import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { z } from '../zod';
import { defaultErrorResponse, errorResponses, registerIdempotencyComponents, registerSharedComponents, responseHeaders } from './components';
import { OPERATIONS, TAGS, errorCodesOf, type Operation } from './operations';
import { API_DESCRIPTION } from './overview';
import { registerWebhooks } from './webhooks';
import './orders';
import './payment-links';
import './transactions';
import './payer-aliases';
import './account';
import './webhook-endpoints';

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

function registerOperation(registry: OpenAPIRegistry, operation: Operation, security: { [name: string]: string[] }[]): void {
  const responses: Record<string, ResponseConfig> = {};
  for (const [status, response] of Object.entries(operation.responses)) {
    responses[status] = {
      description: response.description,
      headers: responseHeaders({ replayed: operation.idempotencyKey === true }),
      content: { 'application/json': { schema: response.schema, example: response.example } },
    };
  }
  const codes = errorCodesOf(operation);
  Object.assign(responses, errorResponses(codes), { default: defaultErrorResponse(codes) });
  registry.registerPath({
    method: operation.method,
    path: operation.path,
    operationId: operation.operationId,
    tags: [operation.tag],
    summary: operation.summary,
    description: operation.description,
    security,
    ...(operation.idempotencyKey ? { parameters: [{ $ref: '#/components/parameters/Idempotency-Key' }] } : {}),
    request: {
      ...(operation.pathId === undefined ? {} : { params: z.object({ id: operation.pathId }) }),
      ...(operation.query === undefined ? {} : { query: operation.query }),
      ...(operation.request === undefined
        ? {}
        : { body: { required: true, content: { 'application/json': { schema: operation.request.schema, example: operation.request.example } } } }),
    },
    responses,
  });
}

/** The OpenAPI 3.1 document of the /v1 API and its webhooks, generated from the schemas the services parse with. */
export function buildOpenApiDocument(serverUrl: string): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registerSharedComponents(registry);
  registerIdempotencyComponents(registry);
  const bearer = registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key, `svc_test_…` or `svc_live_…`, as `Authorization: Bearer <key>`. Keys are for servers only: never put one in a browser or an app.',
  });
  for (const operation of OPERATIONS) registerOperation(registry, operation, [{ [bearer.name]: [] }]);
  registerWebhooks(registry);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Bank-transfer payment matching API', version: 'v1', description: API_DESCRIPTION },
    servers: [{ url: serverUrl }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
  });
}
