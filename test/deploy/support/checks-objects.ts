import { idOf, type K8sObject } from './render';

const CLUSTER_SCOPED = ['Namespace'];
const PART_OF = 'app.kubernetes.io/part-of';

/**
 * Every object lands in the namespace the render creates and carries the label that finds it
 * again: an object without a namespace would go wherever the operator's kubectl context points.
 */
export function placementProblems(objects: readonly K8sObject[]): string[] {
  const namespaces = objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name);
  if (namespaces.length !== 1) return [`the render creates ${namespaces.length} namespaces, not one`];
  const problems: string[] = [];
  for (const object of objects) {
    if (!CLUSTER_SCOPED.includes(object.kind) && object.metadata.namespace !== namespaces[0]) {
      problems.push(`${idOf(object)}: in namespace ${object.metadata.namespace ?? '(none: the kubectl context decides)'}, not ${namespaces[0]}`);
    }
    if (object.metadata.labels?.[PART_OF] !== 'pmatch') problems.push(`${idOf(object)}: no ${PART_OF}=pmatch label`);
  }
  return problems;
}
