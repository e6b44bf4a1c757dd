import { AppError } from '@pmatch/contracts';
import type { z } from 'zod';

/** An id of the right shape, or the 404 an unknown id gets (a malformed id names no object). */
export function wellFormedId(schema: z.ZodString, value: string | undefined, what: string): string {
  const id = value ?? '';
  if (!schema.safeParse(id).success) throw new AppError('resource_missing', `No such ${what}: ${id}.`, { param: 'id' });
  return id;
}
