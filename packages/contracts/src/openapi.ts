export { buildOpenApiDocument, type OpenApiDocument } from './openapi/build';
export { buildIngestOpenApiDocument } from './openapi/ingest';
export { OPERATIONS, TAGS, document, errorCodesOf, type Operation } from './openapi/operations';
export { EVENT_DESCRIPTIONS } from './openapi/webhooks';
