// Lints the OpenAPI documents with Redocly's recommended rules, plus the rules that keep examples
// honest. Prints one JSON object: the problems of each document. Exit 1 when any is an error.
// Usage: node lint-openapi.mjs [file.json ...]   (no file: the built documents of @pmatch/contracts)
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createConfig, lintFromString } from '@redocly/openapi-core';

const require = createRequire(import.meta.url);

const RULES = {
  extends: ['recommended-strict'],
  rules: {
    // The API is not offered under a licence; an invented one would mislead.
    'info-license': 'off',
    'no-invalid-media-type-examples': { severity: 'error', allowAdditionalProperties: false },
    'no-invalid-schema-examples': { severity: 'error', allowAdditionalProperties: false },
    'no-invalid-parameter-examples': { severity: 'error', allowAdditionalProperties: false },
  },
};

function documents() {
  const files = process.argv.slice(2);
  if (files.length > 0) return files.map((file) => ({ name: file, source: readFileSync(file, 'utf8') }));
  const contracts = require('../dist/index.js');
  return [
    { name: 'orders-api', source: JSON.stringify(contracts.buildOpenApiDocument('https://api.pmatch.test')) },
    { name: 'bank-ingest', source: JSON.stringify(contracts.buildIngestOpenApiDocument('https://ingest.pmatch.test')) },
  ];
}

const config = await createConfig(RULES);
const results = {};
let errors = 0;
for (const { name, source } of documents()) {
  const problems = await lintFromString({ source, absoluteRef: `${name}.json`, config });
  results[name] = problems.map((p) => ({
    rule: p.ruleId,
    severity: p.severity,
    message: p.message,
    at: p.location.map((l) => l.pointer).join(' '),
  }));
  errors += problems.filter((p) => p.severity === 'error').length;
}
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
process.exitCode = errors > 0 ? 1 : 0;
