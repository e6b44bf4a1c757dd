import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { IService } from 'kubernetes-models/v1/Service';
import { createTestDatabase, replicaPortsFor, testEnvironment, uniqueName, type TestDatabase } from '@pmatch/testkit';
import { renderAll, type Rendered } from './support/fixtures';
import { REPOSITORY, ofKind } from './support/render';

/**
 * What the services answer on their public port, as each built service reports it when it starts
 * listening (`publicPaths` of its "listening" log line: every route, mounted handler and Router of
 * its Express app, `servedPaths`), against what the rendered Ingresses route to them: a path a
 * service serves that no Ingress routes is unreachable from outside.
 */

type Public = 'orders-api' | 'bank-ingest';
let all: Rendered;
let database: TestDatabase;
const served = {} as Record<Public, string[]>;

/** Starts the built service, reads `publicPaths` from its "listening" line, and stops it. */
async function publicPathsOf(service: Public, env: Record<string, string>): Promise<string[]> {
  const child = spawn(process.execPath, [join(REPOSITORY, 'services', service, 'dist', 'main.js')], {
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      const entry = (() => {
        try {
          return JSON.parse(line) as { msg?: string; publicPaths?: string[] };
        } catch {
          return {};
        }
      })();
      if (entry.msg === `${service} listening`) return entry.publicPaths ?? [];
    }
    throw new Error(`${service} exited before it listened`);
  } finally {
    child.kill('SIGTERM');
  }
}

beforeAll(async () => {
  all = renderAll();
  database = await createTestDatabase();
  // No broker is needed to build the routes: both services start without one (decision 165).
  const env = testEnvironment(database, `${uniqueName('t')}.`, await replicaPortsFor({}), { RABBITMQ_URL: 'amqp://guest:guest@127.0.0.1:1/' });
  served['orders-api'] = await publicPathsOf('orders-api', env);
  served['bank-ingest'] = await publicPathsOf('bank-ingest', env);
});

afterAll(async () => {
  await database?.drop();
});

/** Each Ingress path of the overlay, with the service (by its pods' name) it goes to. */
function ingressRoutes(overlay: 'local' | 'production'): { path: string; service: string }[] {
  const services = ofKind<IService>(all[overlay], 'Service');
  return ofKind<IIngress>(all[overlay], 'Ingress').flatMap((ingress) =>
    (ingress.spec?.rules ?? []).flatMap((rule) =>
      (rule.http?.paths ?? []).map((p) => ({
        path: p.path ?? '',
        service: services.find((s) => s.metadata.name === p.backend.service?.name)?.spec?.selector?.['app.kubernetes.io/name'] ?? '(none)',
      })),
    ),
  );
}

test('when the services run, then orders-api serves its API, pages, console and docs and bank-ingest its ingest paths', () => {
  expect(served['orders-api']).toEqual(['/dashboard', '/docs', '/link', '/pay', '/v1']);
  expect(served['bank-ingest']).toEqual(['/ingest']);
});

describe.each(['local', 'production'] as const)('deploy/k8s/overlays/%s', (overlay) => {
  test('when rendered, then every public path a service serves is routed to it by an Ingress prefix, and every Ingress path goes to a service that serves it', () => {
    const routes = ingressRoutes(overlay);
    const problems: string[] = [];
    for (const service of Object.keys(served) as Public[]) {
      for (const path of served[service]) {
        if (!routes.some((r) => r.path === path && r.service === service)) problems.push(`${service} serves ${path}, which no Ingress routes to it`);
      }
    }
    for (const route of routes) {
      const first = /^\/[^/]+/.exec(route.path)?.[0] ?? route.path;
      const answers = served[route.service as Public] ?? [];
      if (!answers.includes(first)) problems.push(`the Ingress routes ${route.path} to ${route.service}, which serves nothing there`);
    }
    expect(problems).toEqual([]);
  });
});
