import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { ofKind, render, REPOSITORY, type K8sObject } from './render';
import { readRepository, type Repository } from './repository';

export interface Rendered {
  local: K8sObject[];
  production: K8sObject[];
  secrets: K8sObject[];
  repo: Repository;
  guide: string;
}

let rendered: Rendered | undefined;

/** Both overlays and the Secret templates, rendered once per test file. */
export function renderAll(): Rendered {
  rendered ??= {
    local: render('overlays/local'),
    production: render('overlays/production'),
    secrets: render('secret-templates'),
    repo: readRepository(),
    guide: readFileSync(join(REPOSITORY, 'docs', 'OPERATIONS.md'), 'utf8'),
  };
  return rendered;
}

/** The Grafana dashboard the monitoring component ships, parsed (undefined where it is not rendered). */
export function dashboardOf(objects: readonly K8sObject[]): unknown {
  const data = ofKind<IConfigMap>(objects, 'ConfigMap').find((c) => c.metadata.name === 'pmatch-grafana-dashboard')?.data ?? {};
  const json = Object.values(data)[0];
  return json === undefined ? undefined : JSON.parse(json);
}
