// Generates what the client builds from and does not keep in git (src/generated/):
// - api.ts, the TypeScript types of the API, from the OpenAPI document that orders-api serves
//   (built by packages/contracts), with openapi-typescript;
// - names/, the code that writes a name as a bank prints it (`bankForm`), copied from
//   packages/contracts/src/names, so the client gives exactly the form the API shows.
// Run by `npm run build` (after the contracts are built) and by the package's own build, which
// `npm pack` runs. The client's package.json names no workspace package: the contracts are read
// from their place in this repository. Writes only what changed, so an unchanged document leaves
// the client's build up to date. docs/decisions/0047-client-types-generated-at-build.md
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const here = dirname(fileURLToPath(import.meta.url));
const contracts = join(here, '..', '..', 'contracts');
const generated = join(here, '..', 'src', 'generated');
const { buildOpenApiDocument } = createRequire(import.meta.url)(contracts);

/** Writes `text` to `file` unless it holds exactly that already. */
function writeIfChanged(file, text) {
  let current;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current !== text) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}

const ast = await openapiTS(buildOpenApiDocument('http://localhost'), { alphabetize: false, immutable: false });
writeIfChanged(join(generated, 'api.ts'), `// Generated from the OpenAPI document by scripts/generate-types.mjs; do not edit.\n${astToString(ast)}`);

for (const file of ['bank-form.ts', 'corporate.ts', 'normalise.ts']) {
  const source = readFileSync(join(contracts, 'src', 'names', file), 'utf8');
  writeIfChanged(join(generated, 'names', file), `// Copied from packages/contracts/src/names/${file} by scripts/generate-types.mjs; do not edit.\n${source}`);
}
