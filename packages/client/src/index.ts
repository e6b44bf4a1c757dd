export { bankForm } from './bank-form';
export { PaymentsClient, type ClientOptions } from './client';
export { ApiError, ConnectionError, WebhookVerificationError, type ErrorBody, type ErrorCode, type ErrorType } from './errors';
export { type RequestOptions, type ResponseMetadata, type WithResponse } from './request';
export { everyPage, type EventQuery } from './resources';
export { DEFAULT_TIMEOUT_MS, retryAfterMs, retryingFetch, type AttemptOptions, type Fetch, type RetryOptions } from './retry';
export { WebhookVerifier, type WebhookHeaders } from './webhooks';
export * from './types';
