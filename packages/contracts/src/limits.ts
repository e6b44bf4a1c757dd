/** Bounds on input (docs/guide.md "Limits"). */
export const LIMITS = {
  amountMin: 1,
  amountMax: 9_999_999_999,
  payerNameMax: 100,
  /** A seller's reference of a buyer given a dedicated transfer account. */
  customerReferenceMax: 100,
  externalIdMax: 255,
  itemNameMax: 255,
  counterpartyMax: 100,
  bankReferenceMax: 255,
  metadataKeysMax: 50,
  metadataKeyMax: 40,
  metadataValueMax: 500,
  requestBodyBytes: 1024 * 1024,
  listLimitDefault: 20,
  listLimitMax: 100,
  orderedAtFutureToleranceMs: 5 * 60 * 1000,
  defaultOrderLifetimeMs: 14 * 24 * 60 * 60 * 1000,
  reversalWindowMs: 24 * 60 * 60 * 1000,
  maxHeldCandidates: 100,
  maxNearMisses: 10,
  paymentLinkUseLimitMax: 1_000_000,
} as const;
