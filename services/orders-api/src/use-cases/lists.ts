import { AppError } from '@pmatch/contracts';
import type { Page } from '../data/pages';

/** One page of a list as the API returns it. */
export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

/** The page as a list of views; a page that is undefined had an unknown `starting_after`. */
export function listOf<R, T>(page: Page<R> | undefined, view: (row: R) => T, cursor: { what: string; id: string | undefined }): List<T> {
  if (page === undefined) throw new AppError('parameter_invalid', `No such ${cursor.what}: ${cursor.id}.`, { param: 'starting_after' });
  return { object: 'list', data: page.rows.map(view), has_more: page.hasMore };
}
