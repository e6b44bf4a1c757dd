export { PaymentsClient, type ClientOptions } from './client';
export { ApiError, ConnectionError, WebhookVerificationError, type ErrorBody, type ErrorCode, type ErrorType } from './errors';
export { everyPage } from './resources';
export { retryAfterMs, retryingFetch, type Fetch, type RetryOptions } from './retry';
export { WebhookVerifier, type WebhookHeaders } from './webhooks';
export * from './types';
