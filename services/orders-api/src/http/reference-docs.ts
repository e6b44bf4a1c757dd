import { randomBytes } from 'node:crypto';
import { Router } from 'express';

/** Redoc's self-contained bundle, served from our origin: the page loads nothing from elsewhere. */
const REDOC_BUNDLE = require.resolve('redoc/bundles/redoc.standalone.js');
const BUNDLE_PATH = '/docs/redoc.standalone.js';
const START_PATH = '/docs/reference.js';

/**
 * Starts Redoc with the nonce its script tag carries (the browser keeps it from the page's markup
 * but gives it to scripts), so every style element Redoc's styled-components writes carries it too.
 */
const START_SCRIPT = `(function () {
  var nonce = document.currentScript.nonce;
  Redoc.init('/v1/openapi.json', { requiredPropsFirst: true, nonce: nonce }, document.getElementById('redoc'));
})();
`;

const page = (nonce: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<div id="redoc"></div>
<script src="${BUNDLE_PATH}"></script>
<script src="${START_PATH}" nonce="${nonce}"></script>
</body>
</html>
`;

/**
 * The two style sheets Redoc 2.5.4's bundle writes as it loads, before it is given the nonce: its
 * scroll bars' (perfect-scrollbar) and an empty one. A hash allows exactly that text and nothing
 * else; `test/e2e/reference-docs.test.ts` fails on any style the policy blocks, so a Redoc upgrade
 * that changes them is seen at once.
 */
const REDOC_LOAD_STYLES = ["'sha256-QMIg+bpjm3JdElJ388KYke01izlUW0UoNOeKjpMxdgc='", "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"];

/**
 * Redoc renders in the browser: it needs its script, the document (same origin), the style
 * elements styled-components writes (allowed by a nonce of each answer, never 'unsafe-inline': the
 * page shares its origin with the console), a search worker made from a blob, and data: images.
 * Everything else is refused, as on the payment page: no other origin (Redoc's footer asks for its
 * logo from its CDN, and is refused), no framing, no form posts, no Referer.
 */
function securityHeaders(nonce: string): Record<string, string> {
  return {
    'Content-Security-Policy': [
      "default-src 'none'",
      "script-src 'self'",
      `style-src 'self' 'nonce-${nonce}' ${REDOC_LOAD_STYLES.join(' ')}`,
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
}

/** The API reference at /docs, rendered by Redoc from /v1/openapi.json (docs/decisions/0048-reference-page-redoc.md). Public, like the document. */
export function referenceDocsRouter(): Router {
  const router = Router();
  router.use('/docs', (_req, res, next) => {
    res.locals.docsNonce = randomBytes(16).toString('base64');
    res.set(securityHeaders(res.locals.docsNonce as string));
    next();
  });
  router.get('/docs', (_req, res) => {
    res
      .set('Cache-Control', 'no-store')
      .type('html')
      .send(page(res.locals.docsNonce as string));
  });
  router.get(START_PATH, (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('js').send(START_SCRIPT);
  });
  router.get(BUNDLE_PATH, (_req, res) => {
    // pnpm keeps packages under node_modules/.pnpm, a dot folder send() would refuse; the path is ours, not the client's.
    res.sendFile(REDOC_BUNDLE, { maxAge: '1d', dotfiles: 'allow' });
  });
  return router;
}
