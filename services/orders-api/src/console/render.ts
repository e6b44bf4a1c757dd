import type { Response } from 'express';
import { h, type ComponentChildren, type FunctionComponent } from 'preact';
import { documentOf } from './components/layout';

/** Answers with a whole console document. */
export function sendDocument(res: Response, body: ComponentChildren, status = 200): void {
  res.status(status).type('html').send(documentOf(body));
}

/** Answers with one screen, rendered from its component and props. */
export function sendScreen<P extends object>(res: Response, Screen: FunctionComponent<P>, props: NoInfer<P>, status = 200): void {
  sendDocument(res, h(Screen, props), status);
}

/** After a successful POST: back to a screen, with what happened named in the query (`done`), so a reload repeats nothing. */
export function redirectDone(res: Response, path: string, done: string, extra: Record<string, string> = {}): void {
  const params = new URLSearchParams({ done, ...extra });
  res.redirect(303, `${path}?${params}`);
}
