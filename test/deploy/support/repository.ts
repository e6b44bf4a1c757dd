import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPOSITORY } from './render';

/** A zod object schema as far as these checks read it (each service's config, built). */
export interface ConfigSchema {
  shape: Record<string, { safeParse(value: unknown): { success: boolean; data?: unknown } }>;
}

export interface ServiceFacts {
  name: string;
  /** The prefix of its own variables: ORDERS_API for orders-api. */
  envPrefix: string;
  schema: ConfigSchema;
  /** The settings its code reads (`config.X` in services/<name>/src). */
  reads: Set<string>;
  /** The service's own configuration check, which the process runs first at start. */
  loadConfig(env: NodeJS.ProcessEnv): Record<string, unknown>;
}

/** What the manifests are checked against: the repository's services, as built. */
export interface Repository {
  services: Map<string, ServiceFacts>;
  /** Paths every service answers GET on at its admin port (packages/platform admin-server.ts). */
  servedPaths: Set<string>;
  /** The broker's queue names, before AMQP_PREFIX (packages/contracts QUEUES). */
  queues: string[];
  /** `pmatch_*` and `webhook_*` names the code defines (metrics among them). */
  definedNames: Set<string>;
  fileExists(path: string): boolean;
  /** The extra margin the dispatcher keeps after an answer's deadline to record it. */
  leaseMarginMs: number;
}

const isSchema = (value: unknown): value is ConfigSchema => typeof value === 'object' && value !== null && 'shape' in value && 'safeParse' in value;

function serviceFacts(name: string): ServiceFacts {
  const configModule = join(REPOSITORY, 'services', name, 'dist', 'config.js');
  if (!existsSync(configModule)) throw new Error(`${configModule} is missing: build first (npm run build)`);
  const exported = require(configModule) as Record<string, unknown>;
  const schema = Object.values(exported).find(isSchema);
  const loadConfig = exported.loadConfig;
  if (schema === undefined || typeof loadConfig !== 'function') {
    throw new Error(`services/${name}/src/config.ts must export its zod schema and loadConfig`);
  }
  // The service runtime reads the shared settings for every service, Redis's only where the service asks for Redis.
  const ownCode = codeOf(join(REPOSITORY, 'services', name, 'src'));
  const runtime = readFileSync(join(REPOSITORY, 'packages', 'platform', 'src', 'service-runtime.ts'), 'utf8');
  const code = `${ownCode}\n${/\.redis\(/.test(ownCode) ? runtime : runtime.replace(/config\.REDIS_URL/g, '')}`;
  return {
    name,
    envPrefix: name.toUpperCase().replace(/-/g, '_'),
    schema,
    reads: new Set([...code.matchAll(/\bconfig\.([A-Z][A-Z0-9_]*)/g)].map((m) => m[1] as string)),
    loadConfig: loadConfig as ServiceFacts['loadConfig'],
  };
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

function codeOf(...dirs: string[]): string {
  return dirs
    .flatMap(sourceFiles)
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
}

export function readRepository(): Repository {
  const names = readdirSync(join(REPOSITORY, 'services')).filter((dir) => existsSync(join(REPOSITORY, 'services', dir, 'package.json')));
  const adminServer = readFileSync(join(REPOSITORY, 'packages', 'platform', 'src', 'admin-server.ts'), 'utf8');
  const allCode = codeOf(...['packages', 'services'].flatMap((top) => readdirSync(join(REPOSITORY, top)).map((dir) => join(REPOSITORY, top, dir, 'src'))));
  const { QUEUES } = require('@pmatch/contracts') as { QUEUES: Record<string, string> };
  const { LEASE_MARGIN_MS } = require(join(REPOSITORY, 'services', 'webhook-dispatcher', 'dist', 'config.js')) as { LEASE_MARGIN_MS: number };
  return {
    services: new Map(names.map((name) => [name, serviceFacts(name)])),
    servedPaths: new Set([...adminServer.matchAll(/\.get\(\s*'(\/[\w/-]*)'/g)].map((m) => m[1] as string)),
    queues: Object.values(QUEUES),
    definedNames: new Set([...allCode.matchAll(/'((?:pmatch|webhook)_[a-z0-9_]+)'/g)].map((m) => m[1] as string)),
    fileExists: (path) => existsSync(join(REPOSITORY, path)),
    leaseMarginMs: LEASE_MARGIN_MS,
  };
}
