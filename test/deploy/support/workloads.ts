import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import { idOf, ofKind, type K8sObject } from './render';

/** A Deployment's pod as the checks read it: its main container is the one named after it. */
export interface Workload {
  id: string;
  name: string;
  namespace: string | undefined;
  labels: Record<string, string>;
  pod: IPodSpec;
  main: IContainer | undefined;
  deployment: K8sObject & IDeployment;
}

export function workloadsOf(objects: readonly K8sObject[]): Workload[] {
  return ofKind<IDeployment>(objects, 'Deployment').map((deployment) => {
    const pod = deployment.spec?.template.spec ?? { containers: [] };
    return {
      id: idOf(deployment),
      name: deployment.metadata.name,
      namespace: deployment.metadata.namespace,
      labels: deployment.spec?.template.metadata?.labels ?? {},
      pod,
      main: pod.containers.find((c) => c.name === deployment.metadata.name),
      deployment,
    };
  });
}

/** Where a variable's value comes from; for a Secret, the value is the template's placeholder. */
export interface Provided {
  value: string;
  secret?: { name: string; key: string };
}

/**
 * The environment a container starts with: env over envFrom, ConfigMaps from the render, Secrets
 * from the templates (the overlays render none). References that resolve to nothing are problems,
 * except optional ones, which leave the variable unset as the kubelet does.
 */
export function environmentOf(
  container: IContainer,
  objects: readonly K8sObject[],
  secrets: readonly K8sObject[],
): { env: Map<string, Provided>; problems: string[] } {
  const env = new Map<string, Provided>();
  const problems: string[] = [];
  const configMap = (name: string) => ofKind<IConfigMap>(objects, 'ConfigMap').find((c) => c.metadata.name === name);
  const secret = (name: string) => ofKind<ISecret>(secrets, 'Secret').find((s) => s.metadata.name === name);
  const secretData = (s: ISecret): Record<string, string> => ({
    ...Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')])),
    ...s.stringData,
  });
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) {
      const found = configMap(source.configMapRef.name ?? '');
      if (found === undefined) problems.push(`container ${container.name}: envFrom names ConfigMap ${source.configMapRef.name}, which is not rendered`);
      for (const [key, value] of Object.entries(found?.data ?? {})) env.set(key, { value });
    }
    if (source.secretRef) {
      const found = secret(source.secretRef.name ?? '');
      if (found === undefined) problems.push(`container ${container.name}: envFrom names Secret ${source.secretRef.name}, which has no template`);
      const name = source.secretRef.name ?? '';
      for (const [key, value] of Object.entries(found ? secretData(found) : {})) env.set(key, { value, secret: { name, key } });
    }
  }
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom;
    if (ref?.secretKeyRef) {
      const { name = '', key, optional } = ref.secretKeyRef;
      const found = secret(name);
      const value = found ? secretData(found)[key] : undefined;
      if (value !== undefined) env.set(variable.name, { value, secret: { name, key } });
      else if (!optional) problems.push(`container ${container.name}: ${variable.name} reads Secret ${name} key ${key}, which no template has`);
    } else if (ref?.configMapKeyRef) {
      const { name = '', key, optional } = ref.configMapKeyRef;
      const value = configMap(name)?.data?.[key];
      if (value !== undefined) env.set(variable.name, { value });
      else if (!optional) problems.push(`container ${container.name}: ${variable.name} reads ConfigMap ${name} key ${key}, which is not rendered`);
    } else if (ref) {
      problems.push(`container ${container.name}: ${variable.name} comes from a field reference, which these checks do not read`);
    } else {
      env.set(variable.name, { value: variable.value ?? '' });
    }
  }
  return { env, problems };
}

/** A value of the placeholder's form that a service accepts: `<host>` filled in, a key of 32 characters. */
export function sampleOf(placeholder: string): string {
  const rest = placeholder.replace(/^REPLACE-ME\s*/, '').replace(/<[^>]*>/g, 'example');
  return rest === '' ? 'k'.repeat(32) : rest;
}

export function asProcessEnv(env: Map<string, Provided>, secretValue: (p: Provided) => string): NodeJS.ProcessEnv {
  return Object.fromEntries([...env].map(([key, provided]) => [key, provided.secret ? secretValue(provided) : provided.value]));
}

export function portNumber(container: IContainer | undefined, port: string | number | undefined): number | undefined {
  if (typeof port === 'number') return port;
  return container?.ports?.find((p) => p.name === port)?.containerPort;
}
