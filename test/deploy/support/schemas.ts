import { join } from 'node:path';
import ts from 'typescript';
import { REPOSITORY, idOf, type K8sObject } from './render';

/** Where kubernetes-models keeps the model of each API group; a group not listed has no schema here. */
const MODEL_PACKAGES: Record<string, string> = {
  '': 'kubernetes-models',
  apps: 'kubernetes-models',
  autoscaling: 'kubernetes-models',
  batch: 'kubernetes-models',
  policy: 'kubernetes-models',
  'networking.k8s.io': 'kubernetes-models',
  'keda.sh': '@kubernetes-models/keda',
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
};

function modelPath(apiVersion: string, kind: string): string | undefined {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const modelPackage = MODEL_PACKAGES[group ?? ''];
  if (modelPackage === undefined) return undefined;
  return group === '' ? `${modelPackage}/${version}/${kind}` : `${modelPackage}/${group}/${version}/${kind}`;
}

interface Model {
  validate(): void;
}
type ModelClass = new (data: unknown) => Model;

/**
 * Validates an object against the Kubernetes (or CRD) schema of its apiVersion and kind; returns
 * the problems found, an object of an unknown apiVersion or kind being one.
 */
export function schemaProblems(object: K8sObject): string[] {
  const path = modelPath(object.apiVersion, object.kind);
  if (path === undefined) return [`${object.kind}/${object.metadata?.name}: no schema known for apiVersion ${object.apiVersion}`];
  let model: ModelClass | undefined;
  try {
    model = (require(path) as Record<string, ModelClass>)[object.kind];
  } catch {
    model = undefined;
  }
  if (model === undefined) return [`${object.kind}/${object.metadata?.name}: no schema for kind ${object.kind} in ${object.apiVersion}`];
  try {
    new model(object).validate();
    return [];
  } catch (error) {
    return [`${object.kind}/${object.metadata?.name}: ${(error as Error).message}`];
  }
}

/**
 * Fields no type of the object's kind has. The schemas above let unknown fields pass, and so does
 * an API server told to ignore them, so a misspelt `readinesProbe` would vanish unnoticed; the
 * models' TypeScript types do not: each object is type-checked as an object literal of its type.
 */
export function unknownFieldProblems(objects: readonly K8sObject[]): string[] {
  const file = join(REPOSITORY, 'test', 'deploy', '.rendered.ts');
  const source = objects
    .map((o, i) => `export const o${i}: import('${modelPath(o.apiVersion, o.kind) ?? 'unknown'}').I${o.kind} = ${JSON.stringify(o)};`)
    .join('\n');
  const host = ts.createCompilerHost({});
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) => (name === file ? ts.createSourceFile(name, source, language) : read(name, language, ...rest));
  const options = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    lib: ['lib.es2015.d.ts'],
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
  };
  return ts.getPreEmitDiagnostics(ts.createProgram([file], options, host)).map((diagnostic) => {
    const line = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line : -1;
    const object = objects[line];
    return `${object ? idOf(object) : 'rendered objects'}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
  });
}
