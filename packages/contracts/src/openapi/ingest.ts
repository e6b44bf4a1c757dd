import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { BANK_ADAPTER_ID_HEADER, BankNotification, BankNotificationAccepted, StatementImport } from '../ingest';
import type { ErrorCode } from '../errors';
import { DEFAULT_ERROR, errorResponses, registerSharedComponents, responseHeaders } from './components';
import { EXAMPLE_IDS, exampleBankNotification } from './examples';
import type { OpenApiDocument } from './build';

const INGEST_DESCRIPTION = `
How a bank adapter hands bank-account movements to the service. Each notification is one deposit or
withdrawal on a live bank account. Every request names its adapter in \`bank-adapter-id\` (the
\`adp_…\` id \`ops adapter create\` prints with the secret) and is signed the Standard Webhooks way
with that adapter's secret: \`webhook-id\` a unique id per request, \`webhook-timestamp\` Unix seconds
within 5 minutes of ours, \`webhook-signature\` \`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">\`.
A request whose \`bank-adapter-id\` is missing or names no active adapter is answered
\`401 invalid_api_key\` before its body is read; only the named adapter's secret is tried.

A notification is stored once per bank account and \`bank_reference\`: send it again until you get
an answer (a repeat is answered \`200\` with \`duplicate: true\` and stores nothing). Test bank
accounts take no notifications; their deposits come from \`POST /v1/test/deposits\` of the orders API.

An address whose requests are refused (\`400\`, \`401\`, \`413\`) more than 5 times a second, after a
burst of 50, is answered \`429 rate_limited\` with \`Retry-After\` for a while, whatever it sends: a
correctly signing adapter never comes near it.
`.trim();

const ERRORS: ErrorCode[] = [
  'parameter_invalid',
  'parameter_missing',
  'parameter_unknown',
  'invalid_json',
  'invalid_api_key',
  'account_not_allowed',
  'body_too_large',
  'rate_limited',
  'internal_error',
  'service_unavailable',
];
const STATEMENT_ERRORS: ErrorCode[] = [
  'parameter_invalid',
  'invalid_api_key',
  'account_not_allowed',
  'body_too_large',
  'statement_invalid',
  'rate_limited',
  'internal_error',
  'service_unavailable',
];

/** The adapter's id and the three Standard Webhooks headers that sign a request to bank-ingest over `signed` (its raw body). */
function signatureHeaders(idDescription: string, signed: string) {
  const header = (name: string, description: string, example: string) => ({
    in: 'header' as const,
    name,
    required: true,
    description,
    schema: { type: 'string' as const },
    example,
  });
  return [
    header(
      BANK_ADAPTER_ID_HEADER,
      "The adapter's id (`adp_…`, from `ops adapter create`). Missing, unknown or revoked: `401 invalid_api_key` before the body is read. The signature is checked with this adapter's secret only.",
      'adp_2KWPBgLlAfxdpx2AI54pPJ85',
    ),
    header('webhook-id', idDescription, 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W'),
    header('webhook-timestamp', 'Unix seconds when the request was signed; at most 5 minutes from ours.', '1795496531'),
    header(
      'webhook-signature',
      `\`v1,\` and the base64 HMAC-SHA256 of \`<webhook-id>.<webhook-timestamp>.<${signed}>\`.`,
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    ),
  ];
}

function registerNotifications(registry: OpenAPIRegistry): void {
  const accepted = (duplicate: boolean) => ({ transaction_id: EXAMPLE_IDS.transaction, duplicate });
  registry.registerPath({
    method: 'post',
    path: '/ingest/v1/notifications',
    operationId: 'createBankNotification',
    tags: ['Notifications'],
    summary: 'Notify a deposit or withdrawal',
    description:
      'Stores the movement and answers once it is stored: a deposit is then matched to an order, a withdrawal recorded. ' +
      'The bank account, named by `bank_account_id` or as the bank names it (`account`), must be a live one bound to the adapter (else `403 account_not_allowed`). ' +
      'A request naming no active adapter in `bank-adapter-id`, unsigned or not signed by that adapter is `401 invalid_api_key`.',
    security: [],
    parameters: signatureHeaders('Unique per request, e.g. `msg_` and a random part.', 'raw body'),
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
}

function registerStatements(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/ingest/v1/statements',
    operationId: 'importBankStatement',
    tags: ['Statements'],
    summary: 'Import a bank statement file',
    description:
      'A Zengin 振込入金通知 (01) or 入出金取引明細 (03) file, or an ISO 20022 camt.054 / camt.053 file, signed like a notification over its raw bytes. ' +
      'The whole file is checked first (framing, record lengths, trailer counts and sums, every account bound to the adapter): on any error nothing is stored ' +
      '(`422 statement_invalid` with `line` and `field`, or `403 account_not_allowed`). Then every record is stored as a notification would be; the same file again stores nothing.',
    security: [],
    parameters: [
      {
        in: 'query',
        name: 'format',
        required: false,
        description: 'Detected from the first bytes when absent.',
        schema: { type: 'string', enum: ['zengin', 'camt.054', 'camt.053'] },
      },
      ...signatureHeaders('Unique per request.', 'raw bytes of the file'),
    ],
    request: {
      body: {
        required: true,
        content: {
          'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
          'application/xml': { schema: { type: 'string' } },
        },
      },
    },
    responses: {
      200: {
        description: 'Checked and stored.',
        headers: responseHeaders(),
        content: {
          'application/json': {
            schema: StatementImport,
            example: {
              object: 'statement_import',
              id: 'imp_2KWPBgLlAfxdpx2AI54pPJ85',
              format: 'zengin',
              accounts: 3,
              records: 42,
              stored: 40,
              duplicates: 2,
              withdrawals: 5,
              created_at: '2026-11-27T01:00:00.000Z',
            },
          },
        },
      },
      ...errorResponses(STATEMENT_ERRORS),
      default: DEFAULT_ERROR,
    },
  });
}

/** The OpenAPI 3.1 document of bank-ingest's API for bank adapters. */
export function buildIngestOpenApiDocument(serverUrl: string): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registerSharedComponents(registry);
  registerNotifications(registry);
  registerStatements(registry);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Bank-transfer payment matching: bank ingest API', version: 'v1', description: INGEST_DESCRIPTION },
    servers: [{ url: serverUrl }],
    tags: [
      { name: 'Notifications', description: 'Movements on live bank accounts, pushed by bank adapters.' },
      { name: 'Statements', description: 'Whole bank statement files, checked before anything is stored.' },
    ],
  });
}
