import { AppError } from '@pmatch/contracts';
import type { Slice } from '../data/slices';

/** One slice of a list as the API returns it. */
export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

/** The slice as a list of API objects; a slice that is undefined had an unknown `starting_after`. */
export function listOf<R, T>(slice: Slice<R> | undefined, toObject: (row: R) => T, cursor: { what: string; id: string | undefined }): List<T> {
  if (slice === undefined) throw new AppError('parameter_invalid', `No such ${cursor.what}: ${cursor.id}.`, { param: 'starting_after' });
  return { object: 'list', data: slice.rows.map(toObject), has_more: slice.hasMore };
}
