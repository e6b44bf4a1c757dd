import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export const REPOSITORY = join(__dirname, '..', '..', '..');
export const K8S_DIR = join(REPOSITORY, 'deploy', 'k8s');

/** A rendered object; what each kind holds beyond this is checked by its schema first. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/**
 * `kubectl kustomize <dir>` parsed into objects. Throws with a message saying what to install
 * when kubectl is missing: these tests must fail there, never pass without having run.
 */
export function render(kustomization: string): K8sObject[] {
  let output: string;
  try {
    output = execFileSync('kubectl', ['kustomize', join(K8S_DIR, kustomization)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const { code, stderr } = error as { code?: string; stderr?: string };
    if (code === 'ENOENT') {
      throw new Error('kubectl is not installed: these tests render deploy/k8s with `kubectl kustomize` (install kubectl ≥ 1.27)', { cause: error });
    }
    throw new Error(`kubectl kustomize ${kustomization} failed:\n${stderr ?? String(error)}`, { cause: error });
  }
  return parseObjects(output);
}

export function parseObjects(text: string): K8sObject[] {
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`unparsable YAML: ${doc.errors[0]?.message}`);
    return doc.toJS() as K8sObject;
  });
}

export const idOf = (o: K8sObject): string => `${o.kind}/${o.metadata.name}`;

export function ofKind<T>(objects: readonly K8sObject[], kind: string): (K8sObject & T)[] {
  return objects.filter((o) => o.kind === kind) as (K8sObject & T)[];
}

/** Whether every label a selector asks for is on the labels (an empty selector matches all). */
export function matches(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  return Object.entries(selector ?? {}).every(([key, value]) => labels?.[key] === value);
}
