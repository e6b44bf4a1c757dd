import { Router } from 'express';

/** Redoc's self-contained bundle, served from our origin: the page loads nothing from elsewhere. */
const REDOC_BUNDLE = require.resolve('redoc/bundles/redoc.standalone.js');
const BUNDLE_PATH = '/docs/redoc.standalone.js';

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<redoc spec-url="/v1/openapi.json" required-props-first="true"></redoc>
<script src="${BUNDLE_PATH}"></script>
</body>
</html>
`;

/**
 * Redoc renders in the browser: it needs its script, the document (same origin), inline styles
 * (styled-components), a search worker made from a blob, and data: images. Everything else is
 * refused, as on the payment page: no other origin (Redoc's footer asks for its logo from its
 * CDN, and is refused), no framing, no form posts, no Referer.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    'worker-src blob:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** The API reference at /docs, rendered by Redoc from /v1/openapi.json (docs/decisions/0048-reference-page-redoc.md). Public, like the document. */
export function referenceDocsRouter(): Router {
  const router = Router();
  router.use('/docs', (_req, res, next) => {
    res.set(SECURITY_HEADERS);
    next();
  });
  router.get('/docs', (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('html').send(PAGE);
  });
  router.get(BUNDLE_PATH, (_req, res) => {
    // pnpm keeps packages under node_modules/.pnpm, a dot folder send() would refuse; the path is ours, not the client's.
    res.sendFile(REDOC_BUNDLE, { maxAge: '1d', dotfiles: 'allow' });
  });
  return router;
}
