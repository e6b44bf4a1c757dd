// Generates src/generated/api.ts, the TypeScript types of the API, from the OpenAPI document that
// orders-api serves (built by @pmatch/contracts), with openapi-typescript. Run by `npm run build`
// after the contracts are built and before the client is; writes only when the types changed, so
// an unchanged document leaves the client's build up to date. docs/decisions/0047-client-types-generated-at-build.md
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const { buildOpenApiDocument } = require('@pmatch/contracts');

const target = join(here, '..', 'src', 'generated', 'api.ts');
const ast = await openapiTS(buildOpenApiDocument('http://localhost'), { alphabetize: false, immutable: false });
const text = `// Generated from the OpenAPI document by scripts/generate-types.mjs; do not edit.\n${astToString(ast)}`;

let current;
try {
  current = readFileSync(target, 'utf8');
} catch {
  current = undefined;
}
if (current !== text) {
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
}
