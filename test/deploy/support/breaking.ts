import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { K8sObject } from './render';

/** A copy of the objects with one change made to it. */
export function broken(objects: readonly K8sObject[], mutate: (objects: K8sObject[]) => void): K8sObject[] {
  const copy = structuredClone(objects) as K8sObject[];
  mutate(copy);
  return copy;
}

/** The rendered object of that kind whose name starts with `name` (generated names end in a hash). */
export function find<T = Record<string, unknown>>(objects: K8sObject[], kind: string, name: string): K8sObject & T {
  const found = objects.find((o) => o.kind === kind && o.metadata.name.startsWith(name));
  if (found === undefined) throw new Error(`no ${kind}/${name} rendered`);
  return found as K8sObject & T;
}

/** The main container of a service's Deployment. */
export function container(objects: K8sObject[], name: string): IContainer {
  const found = find<IDeployment>(objects, 'Deployment', name).spec?.template.spec?.containers.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no container ${name}`);
  return found;
}

/** Matches a list of problems holding one that contains each part, in order. */
export const mentioning = (...parts: string[]) =>
  expect.arrayContaining([expect.stringMatching(new RegExp(parts.map((p) => p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('[\\s\\S]*')))]);
