import { BankAccountId, CreateOrderRequest, LIMITS, MATCHING_RULES } from '@pmatch/contracts';
import { STATEMENT_FORMATS } from '@pmatch/bank-ingest';
import { z } from 'zod';
import { command, type CommandDefinition } from './cli-definition';
import {
  acceptedBy,
  amountText,
  bankAccountIds,
  booleanText,
  deadLetteredQueue,
  idOf,
  limitText,
  matchingRuleList,
  metadataJson,
  mode,
  oneOf,
  ORG_HELP,
  organisationId,
  QUEUE_HELP,
  text,
  timestamp,
} from './cli-flags';
import { updateSettings } from './commands';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX } from './listings';
import { listDeadLetters, replayDeadLetters } from './dead-letters';
import { resealSecrets } from './secrets';
import { createShopOrder, payShopOrder } from './shop-orders';
import { importStatementFile } from './statements';

/** Secrets, statement files, settings, orders from shop platforms and dead letters. */
export const OPERATION_COMMANDS: readonly CommandDefinition[] = [
  command('secrets reseal', {
    summary: 'Seals every stored secret again under SECRETS_KEY (after a rotation; the old key stays in SECRETS_KEYS_OLD until this has run).',
    flags: z.strictObject({}),
    help: {},
    run: ({ prisma, secretBox }) => resealSecrets(prisma, secretBox),
  }),
  command('statement import', {
    summary: "Imports a bank statement file with bank-ingest's checks; a failed check stores nothing.",
    flags: z.strictObject({ 'bank-account': bankAccountIds, file: text(4096), format: oneOf(STATEMENT_FORMATS).optional() }),
    help: {
      'bank-account': { value: 'BA', description: 'a live account the file may name (ba_…); repeat for several' },
      file: { value: 'F', description: 'the statement file' },
      format: { value: STATEMENT_FORMATS.join('|'), description: 'its format (default: recognised from the content)' },
    },
    repeatable: ['bank-account'],
    run: ({ database, clock }, flags) =>
      importStatementFile(
        database,
        { bankAccountIds: flags['bank-account'], file: flags.file, ...(flags.format === undefined ? {} : { format: flags.format }) },
        clock,
      ),
  }),
  command('settings set', {
    summary: "Changes an organisation's settings of one mode; what is not given keeps its value.",
    flags: z
      .strictObject({
        org: organisationId,
        mode,
        'auto-confirm-late-orders': booleanText.optional(),
        'matching-rules': matchingRuleList.optional(),
      })
      .refine((flags) => flags['auto-confirm-late-orders'] !== undefined || flags['matching-rules'] !== undefined, {
        message: 'nothing to set: give --auto-confirm-late-orders and/or --matching-rules',
      }),
    help: {
      org: ORG_HELP,
      mode: { value: 'test|live', description: 'the mode whose settings change' },
      'auto-confirm-late-orders': { value: 'true|false', description: 'confirm, rather than hold, an unmatched deposit that exactly one late order explains' },
      'matching-rules': { value: 'a,b', description: `the matching rules on, comma-separated (${MATCHING_RULES.join(', ')}; "" for none)` },
    },
    run: ({ prisma, clock }, flags) =>
      updateSettings(
        prisma,
        {
          organisationId: flags.org,
          mode: flags.mode,
          ...(flags['auto-confirm-late-orders'] === undefined ? {} : { autoConfirmLateOrders: flags['auto-confirm-late-orders'] }),
          ...(flags['matching-rules'] === undefined ? {} : { matchingRules: flags['matching-rules'] }),
        },
        clock,
      ),
  }),
  command('shop-order create', {
    summary: 'Creates an order as a shop platform does ("source": "shop"), checked as POST /v1/orders checks one.',
    flags: z.strictObject({
      org: organisationId,
      mode,
      amount: amountText,
      'payer-name': acceptedBy(CreateOrderRequest.shape.payer_name, `must be at most ${LIMITS.payerNameMax} characters and not empty or only spaces`),
      'external-id': acceptedBy(CreateOrderRequest.shape.external_id, `must be 1 to ${LIMITS.externalIdMax} characters`),
      'item-name': acceptedBy(CreateOrderRequest.shape.item_name, `must be 1 to ${LIMITS.itemNameMax} characters`),
      'bank-account': BankAccountId.optional(),
      'ordered-at': timestamp.optional(),
      'expires-at': timestamp.optional(),
      metadata: metadataJson.optional(),
    }),
    help: {
      org: ORG_HELP,
      mode: { value: 'test|live', description: "the order's mode" },
      amount: { value: 'N', description: `the amount in yen (${LIMITS.amountMin} to ${LIMITS.amountMax})` },
      'payer-name': { value: 'NAME', description: "the payer's name as the buyer gave it" },
      'external-id': { value: 'EXT', description: "the shop's own order id, unique per organisation and mode" },
      'item-name': { value: 'ITEM', description: 'what was bought' },
      'bank-account': { value: 'BA', description: "the account to pay into (default: the mode's only account)" },
      'ordered-at': { value: 'TS', description: 'when it was ordered, RFC 3339 with an offset (default now)' },
      'expires-at': { value: 'TS', description: "when it expires, RFC 3339 with an offset (default: the API's default lifetime from now)" },
      metadata: { value: 'JSON', description: 'a JSON object of string values' },
    },
    run: ({ prisma, clock, publicBaseUrl }, flags) =>
      createShopOrder(
        prisma,
        {
          organisationId: flags.org,
          mode: flags.mode,
          amount: flags.amount,
          payerName: flags['payer-name'],
          externalId: flags['external-id'],
          itemName: flags['item-name'],
          ...(flags['bank-account'] === undefined ? {} : { bankAccountId: flags['bank-account'] }),
          ...(flags['ordered-at'] === undefined ? {} : { orderedAt: flags['ordered-at'] }),
          ...(flags['expires-at'] === undefined ? {} : { expiresAt: flags['expires-at'] }),
          ...(flags.metadata === undefined ? {} : { metadata: flags.metadata }),
        },
        publicBaseUrl,
        clock,
      ),
  }),
  command('shop-order pay', {
    summary: 'Reports a shop order paid by the platform: the matcher marks it paid_outside (needs RabbitMQ).',
    flags: z.strictObject({ order: idOf('order', 'ord_…'), 'paid-at': timestamp.optional() }),
    help: {
      order: { value: 'ORD', description: "the order's id (ord_…); it must have come from a shop platform" },
      'paid-at': { value: 'TS', description: 'when it was paid, RFC 3339 with an offset (default now)' },
    },
    run: ({ prisma, matcher }, flags) =>
      payShopOrder(prisma, matcher, { orderId: flags.order, ...(flags['paid-at'] === undefined ? {} : { paidAt: flags['paid-at'] }) }),
  }),
  command('dlq list', {
    summary: 'Lists the dead-letter queues with their counts and first messages, leaving every message where it is (needs RabbitMQ).',
    flags: z.strictObject({ queue: deadLetteredQueue.optional(), limit: limitText }),
    help: {
      queue: QUEUE_HELP,
      limit: { value: 'N', description: `at most N messages shown per queue (1 to ${LIST_LIMIT_MAX}; default ${LIST_LIMIT_DEFAULT}); the count is of all` },
    },
    run: ({ deadLetters }, flags) =>
      listDeadLetters(deadLetters, { ...(flags.queue === undefined ? {} : { queue: flags.queue }), limit: flags.limit ?? LIST_LIMIT_DEFAULT }),
  }),
  command('dlq replay', {
    summary:
      "Moves dead letters back to their original queue (all, one queue's, or one message), each published and confirmed before it is taken off (needs RabbitMQ).",
    flags: z.strictObject({ queue: deadLetteredQueue.optional(), 'message-id': text(255).optional() }),
    help: {
      queue: QUEUE_HELP,
      'message-id': { value: 'ID', description: 'only the message with this id (as dlq list shows it)' },
    },
    run: ({ deadLetters }, flags) =>
      replayDeadLetters(deadLetters, {
        ...(flags.queue === undefined ? {} : { queue: flags.queue }),
        ...(flags['message-id'] === undefined ? {} : { messageId: flags['message-id'] }),
      }),
  }),
];
