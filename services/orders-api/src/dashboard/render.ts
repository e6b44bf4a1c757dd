import type { Response } from 'express';
import type { ComponentChildren } from 'preact';
import { documentOf } from './views/layout';

export function sendPage(res: Response, page: ComponentChildren, status = 200): void {
  res.status(status).type('html').send(documentOf(page));
}

/** After a successful POST: back to a page, with what happened named in the query (`done`). */
export function redirectDone(res: Response, path: string, done: string, extra: Record<string, string> = {}): void {
  const params = new URLSearchParams({ done, ...extra });
  res.redirect(303, `${path}?${params}`);
}
