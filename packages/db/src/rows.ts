/**
 * Select lists that give plain-SQL rows the shape of Prisma's (`OrderRow`, `TransactionRow`):
 * columns aliased to Prisma's field names, so the views and the rest of the code take rows from
 * either path alike. `from` is the table's alias in the statement, if it has one; `namePrefix`
 * goes before every field name, for a statement that returns rows of two tables side by side
 * (`unprefixed` takes one of them out again).
 */
function fields(columns: Record<string, string>, from?: string, namePrefix = ''): string {
  const prefix = from === undefined ? '' : `${from}.`;
  return Object.entries(columns)
    .map(([field, column]) => (field === column && namePrefix === '' ? `${prefix}${column}` : `${prefix}${column} AS "${namePrefix}${field}"`))
    .join(', ');
}

/**
 * The fields named with `namePrefix` in a row of two tables side by side, without it; undefined
 * when the row has none of that table (a LEFT JOIN found nothing: its `id` is null).
 */
export function unprefixed<T>(row: Record<string, unknown>, namePrefix: string): T | undefined {
  if (row[`${namePrefix}id`] === null || row[`${namePrefix}id`] === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(row)
      .filter(([name]) => name.startsWith(namePrefix))
      .map(([name, value]) => [name.slice(namePrefix.length), value]),
  ) as T;
}

const ORDER_COLUMNS = {
  id: 'id',
  seq: 'seq',
  organisationId: 'organisation_id',
  mode: 'mode',
  bankAccountId: 'bank_account_id',
  status: 'status',
  amount: 'amount',
  payerName: 'payer_name',
  externalId: 'external_id',
  itemName: 'item_name',
  orderedAt: 'ordered_at',
  expiresAt: 'expires_at',
  closedAt: 'closed_at',
  metadata: 'metadata',
  source: 'source',
  paymentLinkId: 'payment_link_id',
  paymentToken: 'payment_token',
  transferCode: 'transfer_code',
  dedicated: 'dedicated',
  customerReference: 'customer_reference',
  transferTo: 'transfer_to',
  payment: 'payment',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
};

const TRANSACTION_COLUMNS = {
  id: 'id',
  seq: 'seq',
  organisationId: 'organisation_id',
  mode: 'mode',
  bankAccountId: 'bank_account_id',
  bankReference: 'bank_reference',
  direction: 'direction',
  status: 'status',
  amount: 'amount',
  counterparty: 'counterparty',
  occurredAt: 'occurred_at',
  orderId: 'order_id',
  candidateOrderIds: 'candidate_order_ids',
  decision: 'decision',
  decidedAt: 'decided_at',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  adapterId: 'adapter_id',
  statementImportId: 'statement_import_id',
  remitterCode: 'remitter_code',
  bankReversal: 'bank_reversal',
};

const EVENT_COLUMNS = {
  id: 'id',
  seq: 'seq',
  organisationId: 'organisation_id',
  mode: 'mode',
  bankAccountId: 'bank_account_id',
  type: 'type',
  data: 'data',
  createdAt: 'created_at',
};

/** Every column of `orders` as an `OrderRow`. */
export const orderFields = (from?: string, namePrefix?: string): string => fields(ORDER_COLUMNS, from, namePrefix);

/** Every column of `transactions` as a `TransactionRow`. */
export const transactionFields = (from?: string, namePrefix?: string): string => fields(TRANSACTION_COLUMNS, from, namePrefix);

/** Every column of `events` Prisma reads (not `tx_id`) as an `EventRow`. */
export const eventFields = (from?: string): string => fields(EVENT_COLUMNS, from);
