import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { BankNotification, BankNotificationAccepted } from '../api';
import type { ErrorCode } from '../errors';
import { DEFAULT_ERROR, errorResponses, registerSharedComponents, responseHeaders } from './components';
import { EXAMPLE_IDS, exampleBankNotification } from './examples';
import type { OpenApiDocument } from './build';

const INGEST_DESCRIPTION = `
How a bank adapter hands bank-account movements to the service. Each notification is one deposit or
withdrawal on a live bank account, signed the Standard Webhooks way with the adapter's secret
(issued by the operator: \`ops adapter create\`): \`webhook-id\` a unique id per request,
\`webhook-timestamp\` Unix seconds within 5 minutes of ours, \`webhook-signature\`
\`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">\`.

A notification is stored once per bank account and \`bank_reference\`: send it again until you get
an answer (a repeat is answered \`200\` with \`duplicate: true\` and stores nothing). Test bank
accounts take no notifications; their deposits come from \`POST /v1/test/deposits\` of the orders API.
`.trim();

const ERRORS: ErrorCode[] = ['parameter_invalid', 'parameter_missing', 'parameter_unknown', 'invalid_json', 'invalid_api_key', 'body_too_large', 'internal_error', 'service_unavailable'];

/** The OpenAPI 3.1 document of bank-ingest's API for bank adapters. */
export function buildIngestOpenApiDocument(serverUrl: string): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registerSharedComponents(registry);
  const signature = (name: string, description: string, example: string) => ({ in: 'header' as const, name, required: true, description, schema: { type: 'string' as const }, example });
  const accepted = (duplicate: boolean) => ({ transaction_id: EXAMPLE_IDS.transaction, duplicate });
  registry.registerPath({
    method: 'post',
    path: '/ingest/v1/notifications',
    operationId: 'createBankNotification',
    tags: ['Notifications'],
    summary: 'Notify a deposit or withdrawal',
    description:
      'Stores the movement and answers once it is stored: a deposit is then matched to an order, a withdrawal recorded. ' +
      'The bank account must be a live one. An unsigned or badly signed request is `401 invalid_api_key`.',
    security: [],
    parameters: [
      signature('webhook-id', 'Unique per request, e.g. `msg_` and a random part.', 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W'),
      signature('webhook-timestamp', 'Unix seconds when the request was signed; at most 5 minutes from ours.', '1795496531'),
      signature('webhook-signature', '`v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>`.', 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='),
    ],
    request: { body: { required: true, content: { 'application/json': { schema: BankNotification, example: exampleBankNotification } } } },
    responses: {
      202: {
        description: 'Stored; the deposit will be matched.',
        headers: responseHeaders(),
        content: { 'application/json': { schema: BankNotificationAccepted, example: accepted(false) } },
      },
      200: {
        description: 'Already stored by an earlier notification with this bank account and `bank_reference`; nothing was stored now.',
        headers: responseHeaders(),
        content: { 'application/json': { schema: BankNotificationAccepted, example: accepted(true) } },
      },
      ...errorResponses(ERRORS),
      default: DEFAULT_ERROR,
    },
  });
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Bank-transfer payment matching: bank ingest API', version: 'v1', description: INGEST_DESCRIPTION },
    servers: [{ url: serverUrl }],
    tags: [{ name: 'Notifications', description: 'Movements on live bank accounts, pushed by bank adapters.' }],
  });
}
