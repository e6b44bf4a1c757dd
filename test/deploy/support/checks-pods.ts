import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { BankIngestConfig, SPOOL_MARGIN_BYTES } from '../../../services/bank-ingest/src/config';
import { ofKind, type K8sObject } from './render';
import type { Repository, ServiceFacts } from './repository';
import { asProcessEnv, environmentOf, portNumber, sampleOf, workloadsOf, type Provided, type Workload } from './workloads';

/**
 * Variables the manifests set before the services read them. A name leaves this list once its
 * service reads it (a test says when).
 */
export const SET_AHEAD_OF_THE_SERVICES: string[] = [];

/** The probe each kind of check must use: liveness never asks about dependencies (/readyz does). */
const PROBE_PATHS = { startupProbe: '/healthz', livenessProbe: '/healthz', readinessProbe: '/readyz' } as const;

/** Credentials a service must hold alone: its own database role and broker user. */
const OWN_CREDENTIALS = ['DATABASE_URL', 'RABBITMQ_URL'];

/** What bounds the work a stopping service still finishes, from its configuration. */
const IN_FLIGHT_BOUND_MS: Record<string, (config: Record<string, unknown>, repo: Repository) => number> = {
  'orders-api': (c) => Number(c.COMMAND_TIMEOUT_MS),
  'bank-ingest': () => 0,
  matcher: (c) => Number(c.LOCK_WAIT_MS),
  'webhook-dispatcher': (c, repo) => Number(c.DELIVERY_TIMEOUT_MS) + repo.leaseMarginMs,
};
/** Closing connections and pools after the work is done. */
const CLOSE_MARGIN_S = 5;

const containersOf = (w: Workload): IContainer[] => [...(w.pod.initContainers ?? []), ...w.pod.containers];

function serviceOf(w: Workload, repo: Repository): ServiceFacts | undefined {
  return repo.services.get(w.name);
}

/** Every Deployment is a service of the repository, runs its built entry point from its own image. */
export function imageProblems(objects: readonly K8sObject[], repo: Repository): string[] {
  const problems: string[] = [];
  const workloads = workloadsOf(objects);
  for (const name of repo.services.keys()) {
    if (!workloads.some((w) => w.name === name)) problems.push(`service ${name} has no Deployment`);
  }
  for (const w of workloads) {
    if (!repo.services.has(w.name)) {
      problems.push(`${w.id}: there is no service ${w.name} (services/*)`);
      continue;
    }
    if (w.main === undefined) {
      problems.push(`${w.id}: no container named ${w.name}`);
      continue;
    }
    for (const c of containersOf(w)) {
      const repository = (c.image ?? '').split('@')[0]?.replace(/:[^/:]*$/, '') ?? '';
      const imageService = repository.split('/').pop();
      if (imageService !== w.name) problems.push(`${w.id}: container ${c.name} runs image ${c.image}, not the image of ${w.name}`);
      if (c !== w.main && c.image !== w.main.image) problems.push(`${w.id}: container ${c.name} runs ${c.image}, another release than ${w.main.image}`);
      const argv = [...(c.command ?? []), ...(c.args ?? [])];
      const [program, script] = argv;
      if (program !== 'node' || script === undefined) {
        problems.push(`${w.id}: container ${c.name} runs ${JSON.stringify(argv)}, not node with a script`);
      } else if (!repo.fileExists(script)) {
        problems.push(`${w.id}: container ${c.name} runs ${script}, which does not exist (not built, or no such service)`);
      }
      if (c === w.main && script !== `services/${w.name}/dist/main.js`) {
        problems.push(`${w.id}: runs ${script}, not services/${w.name}/dist/main.js`);
      }
    }
  }
  return problems;
}

function probeProblems(w: Workload, env: Map<string, Provided>, facts: ServiceFacts, repo: Repository): string[] {
  const problems: string[] = [];
  const adminVariable = `${facts.envPrefix}_ADMIN_PORT`;
  const adminPort = Number(env.get(adminVariable)?.value);
  if (!Number.isInteger(adminPort) || adminPort <= 0) return [`${w.id}: ${adminVariable} is not set to a port`];
  if (portNumber(w.main, 'admin') !== adminPort) problems.push(`${w.id}: the container port named admin is not ${adminVariable} (${adminPort})`);
  const publicPort = env.get(`${facts.envPrefix}_PORT`)?.value;
  if (publicPort !== undefined && portNumber(w.main, 'http') !== Number(publicPort)) {
    problems.push(`${w.id}: the container port named http is not ${facts.envPrefix}_PORT (${publicPort})`);
  }
  for (const [kind, path] of Object.entries(PROBE_PATHS) as [keyof typeof PROBE_PATHS, string][]) {
    const probe: IProbe | undefined = w.main?.[kind];
    if (probe?.httpGet === undefined) {
      problems.push(`${w.id}: no ${kind} with httpGet`);
      continue;
    }
    const { path: probed = '', port } = probe.httpGet;
    if (!repo.servedPaths.has(probed)) problems.push(`${w.id}: ${kind} asks for ${probed}, which the services do not serve on their admin port`);
    else if (probed !== path) problems.push(`${w.id}: ${kind} asks for ${probed}, not ${path}`);
    const probedPort = portNumber(w.main, port);
    if (probedPort !== adminPort) problems.push(`${w.id}: ${kind} probes port ${String(port)} (${probedPort}), not the admin port ${adminPort}`);
  }
  return problems;
}

function configurationProblems(w: Workload, env: Map<string, Provided>, facts: ServiceFacts): string[] {
  const problems: string[] = [];
  for (const [key, field] of Object.entries(facts.schema.shape)) {
    if (env.has(key)) continue;
    const unset = field.safeParse(undefined);
    if (!unset.success) problems.push(`${w.id}: ${key} is required by ${facts.name} and not provided`);
    else if (facts.reads.has(key) && typeof unset.data === 'string' && /localhost|127\.0\.0\.1/.test(unset.data)) {
      problems.push(`${w.id}: ${key} is not set, and its default (${unset.data}) names this machine, not the cluster's`);
    }
  }
  for (const key of env.keys()) {
    if (!(key in facts.schema.shape) && !SET_AHEAD_OF_THE_SERVICES.includes(key)) problems.push(`${w.id}: ${key} is set, and ${facts.name} does not read it`);
  }
  try {
    facts.loadConfig(asProcessEnv(env, (p) => sampleOf(p.value)));
  } catch (error) {
    problems.push(`${w.id}: ${facts.name} refuses its configuration with every Secret filled in: ${(error as Error).message}`);
  }
  const fromSecrets = [...env].filter(([, p]) => p.secret !== undefined).map(([key]) => key);
  try {
    facts.loadConfig(asProcessEnv(env, (p) => p.value));
    problems.push(`${w.id}: ${facts.name} starts with the Secret templates' placeholders`);
  } catch (error) {
    const message = (error as Error).message;
    for (const key of fromSecrets) {
      if (!message.includes(`${key}:`)) problems.push(`${w.id}: ${facts.name} accepts the placeholder of ${key}`);
    }
  }
  return problems;
}

function credentialProblems(workloads: Workload[], envs: Map<string, Map<string, Provided>>): string[] {
  const problems: string[] = [];
  const holders = new Map<string, string>();
  for (const w of workloads) {
    const role = `pmatch_${w.name.replace(/-/g, '_')}`;
    for (const key of OWN_CREDENTIALS) {
      const provided = envs.get(w.id)?.get(key);
      if (provided?.secret === undefined) {
        problems.push(`${w.id}: ${key} does not come from a Secret`);
        continue;
      }
      const where = `${provided.secret.name}/${provided.secret.key}`;
      const other = holders.get(where);
      if (other !== undefined) problems.push(`${w.id}: ${key} comes from ${where}, which ${other} reads too`);
      holders.set(where, w.id);
      if (new URL(sampleOf(provided.value)).username !== role) problems.push(`${w.id}: ${key}'s template does not log in as ${role}`);
    }
  }
  return problems;
}

/** Probes, configuration and credentials, checked against what each service's code reads and serves. */
export function podProblems(objects: readonly K8sObject[], secrets: readonly K8sObject[], repo: Repository): string[] {
  const problems: string[] = [];
  const envs = new Map<string, Map<string, Provided>>();
  const workloads = workloadsOf(objects).filter((w) => w.main !== undefined && repo.services.has(w.name));
  for (const w of workloads) {
    const facts = serviceOf(w, repo) as ServiceFacts;
    for (const c of containersOf(w)) {
      const { env, problems: unresolved } = environmentOf(c, objects, secrets);
      problems.push(...unresolved.map((p) => `${w.id}: ${p}`));
      if (c === w.main) {
        envs.set(w.id, env);
        problems.push(...probeProblems(w, env, facts, repo), ...configurationProblems(w, env, facts));
        problems.push(...graceProblems(w, env, facts, repo));
      } else {
        if (env.get('DATABASE_URL')?.secret === undefined) problems.push(`${w.id}: init container ${c.name} has no DATABASE_URL from a Secret`);
        // The migrate step declares the broker topology, as the one user that may.
        const broker = env.get('RABBITMQ_URL');
        if (broker?.secret === undefined) problems.push(`${w.id}: init container ${c.name} has no RABBITMQ_URL from a Secret`);
        else if (new URL(sampleOf(broker.value)).username !== 'pmatch_topology') {
          problems.push(`${w.id}: init container ${c.name}'s RABBITMQ_URL template does not log in as pmatch_topology`);
        }
      }
    }
  }
  return [...problems, ...credentialProblems(workloads, envs)];
}

function graceProblems(w: Workload, env: Map<string, Provided>, facts: ServiceFacts, repo: Repository): string[] {
  const problems: string[] = [];
  const preStop = w.main?.lifecycle?.preStop?.sleep?.seconds ?? 0;
  const servesTraffic = w.main?.ports?.some((p) => p.name === 'http') ?? false;
  if (servesTraffic && preStop < 5)
    problems.push(`${w.id}: serves traffic and has no preStop sleep of at least 5 s, so it stops before its endpoints are removed`);
  let config: Record<string, unknown>;
  try {
    config = facts.loadConfig(asProcessEnv(env, (p) => sampleOf(p.value)));
  } catch {
    return problems; // reported by the configuration check
  }
  const boundS = Math.ceil((IN_FLIGHT_BOUND_MS[w.name]?.(config, repo) ?? Number.NaN) / 1000);
  const needed = preStop + boundS + CLOSE_MARGIN_S;
  const grace = w.pod.terminationGracePeriodSeconds ?? 30;
  if (!(grace >= needed))
    problems.push(
      `${w.id}: terminationGracePeriodSeconds ${grace} < ${needed} (preStop ${preStop} s + in-flight work ${boundS} s + ${CLOSE_MARGIN_S} s to close)`,
    );
  return problems;
}

const QUANTITY_UNITS: Record<string, number> = { '': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, k: 1e3, M: 1e6, G: 1e9 };

/** A Kubernetes quantity of bytes (`320Mi`, `1G`, `4096`); NaN when unreadable. */
function quantityBytes(quantity: string | number | undefined): number {
  const match = /^([0-9]+)(Ki|Mi|Gi|k|M|G)?$/.exec(String(quantity ?? ''));
  return match === null ? NaN : Number(match[1]) * QUANTITY_UNITS[match[2] ?? '']!;
}

/** bank-ingest's /tmp holds the statement spool: STATEMENT_SPOOL_MAX uploads of STATEMENT_MAX_BYTES, and the margin. */
function spoolSpaceProblems(objects: readonly K8sObject[], pod: Workload['pod'], c: IContainer, at: string): string[] {
  const configured = (name: string) =>
    ofKind<IConfigMap>(objects, 'ConfigMap')
      .map((m) => m.data?.[name])
      .find((v) => v !== undefined);
  const maxBytes = BankIngestConfig.shape.STATEMENT_MAX_BYTES.parse(configured('STATEMENT_MAX_BYTES'));
  const spoolMax = BankIngestConfig.shape.STATEMENT_SPOOL_MAX.parse(configured('STATEMENT_SPOOL_MAX'));
  const needed = spoolMax * maxBytes + SPOOL_MARGIN_BYTES;
  const mount = (c.volumeMounts ?? []).find((m) => m.mountPath === '/tmp');
  const sizeLimit = (pod.volumes ?? []).find((v) => v.name === mount?.name)?.emptyDir?.sizeLimit;
  if (!(quantityBytes(sizeLimit as string | undefined) >= needed)) {
    return [
      `${at}: /tmp holds ${sizeLimit ?? 'no size limit'}, less than STATEMENT_SPOOL_MAX (${spoolMax}) × STATEMENT_MAX_BYTES (${maxBytes}) + ${SPOOL_MARGIN_BYTES} bytes`,
    ];
  }
  return [];
}

/** The restricted Pod Security Standard and then some: read-only root, /tmp on an emptyDir, sized. */
export function securityProblems(objects: readonly K8sObject[]): string[] {
  const problems: string[] = [];
  for (const w of workloadsOf(objects)) {
    const pod = w.pod;
    if (pod.securityContext?.runAsNonRoot !== true) problems.push(`${w.id}: runAsNonRoot is not true`);
    if (!((pod.securityContext?.runAsUser ?? 0) > 0)) problems.push(`${w.id}: runAsUser is not a non-root numeric user`);
    if (pod.securityContext?.seccompProfile?.type !== 'RuntimeDefault') problems.push(`${w.id}: seccomp profile is not RuntimeDefault`);
    if (pod.automountServiceAccountToken !== false) problems.push(`${w.id}: mounts a service account token it never uses`);
    const emptyDirs = new Set((pod.volumes ?? []).filter((v) => v.emptyDir !== undefined).map((v) => v.name));
    for (const c of containersOf(w)) {
      const at = `${w.id}: container ${c.name}`;
      const sc = c.securityContext;
      if (sc?.allowPrivilegeEscalation !== false) problems.push(`${at}: allowPrivilegeEscalation is not false`);
      if (sc?.readOnlyRootFilesystem !== true) problems.push(`${at}: root filesystem is not read-only`);
      if (!(sc?.capabilities?.drop ?? []).includes('ALL')) problems.push(`${at}: does not drop ALL capabilities`);
      if (sc?.privileged === true || (sc?.capabilities?.add ?? []).length > 0) problems.push(`${at}: asks for privileges`);
      if (!(c.volumeMounts ?? []).some((m) => m.mountPath === '/tmp' && emptyDirs.has(m.name))) problems.push(`${at}: /tmp is not an emptyDir`);
      if (w.id === 'Deployment/bank-ingest' && c.name === 'bank-ingest') problems.push(...spoolSpaceProblems(objects, pod, c, at));
      for (const bound of ['requests', 'limits'] as const) {
        for (const resource of ['cpu', 'memory']) {
          if (c.resources?.[bound]?.[resource] === undefined) problems.push(`${at}: no ${resource} ${bound.replace(/s$/, '')}`);
        }
      }
    }
  }
  return problems;
}
