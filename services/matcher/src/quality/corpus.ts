import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * One case of the matching-quality corpus (`services/matcher/quality/corpus.json`): a deposit as a
 * bank prints it, the open orders of its amount as merchants wrote them, the order the depositor
 * really paid (`right`, null when no automatic confirmation is right), and the decision expected
 * with every rule enabled.
 */
export const QualityCase = z.object({
  id: z.string(),
  group: z.string(),
  deposit: z.string(),
  orders: z.array(z.object({ ref: z.string(), payer_name: z.string(), expired: z.boolean().optional() })),
  right: z.string().nullable(),
  expected: z.object({ outcome: z.enum(['confirmed', 'held', 'unmatched']), order: z.string().optional(), reason: z.string() }),
  note: z.string(),
});
export type QualityCase = z.infer<typeof QualityCase>;

export const CORPUS_PATH = join(__dirname, '..', '..', 'quality', 'corpus.json');

export function loadCorpus(path = CORPUS_PATH): QualityCase[] {
  return z.array(QualityCase).parse(JSON.parse(readFileSync(path, 'utf8')));
}
