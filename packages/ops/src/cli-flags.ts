import {
  Amount,
  BankAccountId,
  LIMITS,
  MATCHING_RULES,
  MODES,
  Metadata,
  Timestamp,
  idPattern,
  type IdKind,
  type MatchingRule,
  type Mode,
} from '@pmatch/contracts';
import { DEAD_LETTERED_QUEUES } from '@pmatch/platform';
import { z } from 'zod';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, type ListFilter, type Page } from './listings';

// Flag schemas. A schema-level message replaces zod's for every issue, a missing value included,
// so those give "is required" themselves; the others get it from the parse-wide map in prepare().
export const unlessMissing = (message: string) => (issue: { input: unknown }) => (issue.input === undefined ? 'is required' : message);

export const text = (max: number) => z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

export const idOf = (kind: IdKind, example: string) => z.string().regex(idPattern(kind), `must be an id like ${example}`);

export const oneOf = <Values extends readonly [string, ...string[]]>(values: Values) =>
  z.enum(values, { error: unlessMissing(`must be one of ${values.join(', ')}`) });

export const digits = (count: number) => z.string().regex(new RegExp(`^[0-9]{${count}}$`), `must be exactly ${count} digits`);

export const booleanText = oneOf(['true', 'false']).transform((value) => value === 'true');

function isMatchingRule(name: string): name is MatchingRule {
  return (MATCHING_RULES as readonly string[]).includes(name);
}

/** "a,b" -> ["a","b"]; "" -> [] (no rule enabled). */
export const matchingRuleList = z.string().transform((value, context): MatchingRule[] => {
  const names = value.trim() === '' ? [] : value.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !isMatchingRule(name));
  if (unknown.length > 0) {
    context.addIssue({
      code: 'custom',
      message: `has unknown rule(s) ${unknown.map((n) => JSON.stringify(n)).join(', ')}; allowed: ${MATCHING_RULES.join(', ')} (or "" for none)`,
    });
    return z.NEVER;
  }
  if (new Set(names).size !== names.length) {
    context.addIssue({ code: 'custom', message: 'names a rule more than once' });
    return z.NEVER;
  }
  return names.filter(isMatchingRule);
});

export const organisationId = idOf('organisation', 'org_…');
export const adapterId = idOf('adapter', 'adp_…');
export const mode = oneOf(MODES);
/** One or more `--bank-account ba_…`, each once. */
export const bankAccountIds = z
  .array(BankAccountId)
  .min(1, 'is required')
  .refine((ids) => new Set(ids).size === ids.length, 'names an account more than once');

/** A flag value that the API's own schema for the field accepts: one rule for both doors. */
export const acceptedBy = (schema: z.ZodType, message: string) => z.string().refine((value) => schema.safeParse(value).success, message);

const AMOUNT_RULE = `must be a whole number from ${LIMITS.amountMin} to ${LIMITS.amountMax}`;
export const amountText = z
  .string()
  .regex(/^[0-9]+$/, AMOUNT_RULE)
  .transform(Number)
  .refine((amount) => Amount.safeParse(amount).success, AMOUNT_RULE);

export const timestamp = acceptedBy(Timestamp, 'must be an RFC 3339 timestamp with an offset, like 2026-11-22T11:17:01+09:00').transform(
  (value) => new Date(value),
);

const METADATA_RULE =
  `must be a JSON object of string values with at most ${LIMITS.metadataKeysMax} keys, ` +
  `keys of 1 to ${LIMITS.metadataKeyMax} characters and values of at most ${LIMITS.metadataValueMax} characters`;
export const metadataJson = z.string().transform((text, context) => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const parsed = Metadata.safeParse(value);
  if (!parsed.success) {
    context.addIssue({ code: 'custom', message: METADATA_RULE });
    return z.NEVER;
  }
  return parsed.data;
});

export const limitText = z
  .string()
  .regex(/^[0-9]+$/, `must be a whole number from 1 to ${LIST_LIMIT_MAX}`)
  .transform(Number)
  .refine((limit) => limit >= 1 && limit <= LIST_LIMIT_MAX, `must be a whole number from 1 to ${LIST_LIMIT_MAX}`)
  .optional();

/** The flags every list command takes, and the page they ask for. */
export const pageFlags = <Kind extends IdKind>(kind: Kind, example: string) => ({
  limit: limitText,
  'starting-after': idOf(kind, example).optional(),
});
export const pageHelp = (what: string, example: string) => ({
  limit: { value: 'N', description: `at most N ${what} (1 to ${LIST_LIMIT_MAX}; default ${LIST_LIMIT_DEFAULT})` },
  'starting-after': { value: example, description: `start after this one: the last id of the page before (when has_more was true)` },
});
/** The list filter `--org` and `--mode` ask for (either may be absent). */
export const filterOf = (flags: { org?: string | undefined; mode?: Mode | undefined }): ListFilter => ({
  ...(flags.org === undefined ? {} : { organisationId: flags.org }),
  ...(flags.mode === undefined ? {} : { mode: flags.mode }),
});
export const pageOf = (flags: { limit?: number | undefined; 'starting-after'?: string | undefined }): Page => ({
  limit: flags.limit ?? LIST_LIMIT_DEFAULT,
  ...(flags['starting-after'] === undefined ? {} : { startingAfter: flags['starting-after'] }),
});

export const ORG_HELP = { value: 'ORG', description: 'the organisation (org_…)' };

/** A queue that has a dead-letter queue, by its name without the prefix (or its `.dead` queue's). */
export const deadLetteredQueue = z
  .string()
  .transform((name) => name.replace(/\.dead$/, ''))
  .refine((name) => DEAD_LETTERED_QUEUES.includes(name), `must be one of ${DEAD_LETTERED_QUEUES.join(', ')}`);
export const QUEUE_HELP = {
  value: 'QUEUE',
  description: `only this queue's dead letters: ${DEAD_LETTERED_QUEUES.join(', ')} (or its .dead name); default all`,
};
