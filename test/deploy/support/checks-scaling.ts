import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import type { ITriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import type { IPrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import { idOf, matches, ofKind, type K8sObject } from './render';
import { workloadsOf } from './workloads';

/**
 * Metrics the dashboard, the alerts and the autoscaler read that the services do not define yet.
 * A name leaves this list once the code defines it (a test says when); until then, what reads
 * it sees nothing.
 */
export const METRICS_AHEAD_OF_THE_SERVICES: string[] = [];

/**
 * Every Deployment has one autoscaler or none (KEDA and an HPA on one Deployment fight), none
 * sets `replicas` under an autoscaler, and no service runs fewer than `minReplicas`.
 */
export function autoscalingProblems(objects: readonly K8sObject[], options: { minReplicas: number }): string[] {
  const problems: string[] = [];
  const hpas = ofKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler');
  const scaledObjects = ofKind<IScaledObject>(objects, 'ScaledObject');
  const scalers = [
    ...hpas.map((h) => ({ id: idOf(h), target: h.spec?.scaleTargetRef.name, min: h.spec?.minReplicas ?? 1 })),
    ...scaledObjects.map((s) => ({ id: idOf(s), target: s.spec?.scaleTargetRef.name, min: s.spec?.minReplicaCount ?? 0 })),
  ];
  const workloads = workloadsOf(objects);
  for (const scaler of scalers) {
    if (!workloads.some((w) => w.name === scaler.target)) problems.push(`${scaler.id}: scales ${scaler.target}, which is not a Deployment here`);
  }
  for (const w of workloads) {
    const own = scalers.filter((s) => s.target === w.name);
    if (own.length > 1) problems.push(`${w.id}: scaled by ${own.map((s) => s.id).join(' and ')}`);
    if (own.length > 0 && w.deployment.spec?.replicas !== undefined)
      problems.push(`${w.id}: sets replicas, which its autoscaler owns: every apply would reset it`);
    const least = own[0]?.min ?? w.deployment.spec?.replicas ?? 1;
    if (least < options.minReplicas) problems.push(`${w.id}: may run ${least} replicas, fewer than ${options.minReplicas}`);
  }
  return problems;
}

/**
 * KEDA watches exactly the queues the scaled service consumes, by their names on the broker
 * (AMQP_PREFIX + packages/contracts QUEUES), with credentials from a Secret that has a template.
 */
export function queueScalingProblems(objects: readonly K8sObject[], secrets: readonly K8sObject[], queues: readonly string[]): string[] {
  const problems: string[] = [];
  const prefix =
    ofKind<IConfigMap>(objects, 'ConfigMap')
      .map((c) => c.data?.AMQP_PREFIX)
      .find((p) => p !== undefined) ?? '';
  const auths = ofKind<ITriggerAuthentication>(objects, 'TriggerAuthentication');
  for (const scaled of ofKind<IScaledObject>(objects, 'ScaledObject')) {
    const service = scaled.spec?.scaleTargetRef.name ?? '';
    const consumed = queues.filter((q) => q.startsWith(`${service}.`)).map((q) => `${prefix}${q}`);
    const watched = (scaled.spec?.triggers ?? []).filter((t) => t.type === 'rabbitmq');
    for (const trigger of watched) {
      const queue = trigger.metadata.queueName ?? '';
      if (!consumed.includes(queue)) problems.push(`${idOf(scaled)}: watches queue ${queue}, which ${service} does not consume (${consumed.join(', ')})`);
      const auth = auths.find((a) => a.metadata.name === trigger.authenticationRef?.name);
      if (auth === undefined) problems.push(`${idOf(scaled)}: names TriggerAuthentication ${trigger.authenticationRef?.name}, which is not rendered`);
      for (const ref of auth?.spec?.secretTargetRef ?? []) {
        const secret = ofKind<ISecret>(secrets, 'Secret').find((s) => s.metadata.name === ref.name);
        if (secret?.stringData?.[ref.key] === undefined)
          problems.push(`${idOf(auth as K8sObject)}: reads Secret ${ref.name} key ${ref.key}, which no template has`);
      }
    }
    for (const queue of consumed) {
      if (!watched.some((t) => t.metadata.queueName === queue)) problems.push(`${idOf(scaled)}: does not watch ${queue}`);
    }
  }
  return problems;
}

/** Every Deployment has one PodDisruptionBudget, and it lets a node drain even at one replica. */
export function disruptionProblems(objects: readonly K8sObject[]): string[] {
  const problems: string[] = [];
  const budgets = ofKind<IPodDisruptionBudget>(objects, 'PodDisruptionBudget');
  for (const w of workloadsOf(objects)) {
    const own = budgets.filter((b) => b.metadata.namespace === w.namespace && matches(b.spec?.selector?.matchLabels, w.labels));
    if (own.length !== 1) problems.push(`${w.id}: ${own.length} PodDisruptionBudgets select it, not one`);
    for (const budget of own) {
      if (budget.spec?.maxUnavailable === undefined || budget.spec.maxUnavailable === 0) {
        problems.push(`${idOf(budget)}: without maxUnavailable ≥ 1 it blocks every drain while one replica runs`);
      }
    }
  }
  return problems;
}

/** PromQL of the alerts and of KEDA's Prometheus triggers, with where each comes from. */
export function queriesOf(objects: readonly K8sObject[], dashboard: unknown): { where: string; expr: string }[] {
  const rules = ofKind<IPrometheusRule>(objects, 'PrometheusRule').flatMap((r) =>
    (r.spec?.groups ?? []).flatMap((g) => (g.rules ?? []).map((rule) => ({ where: `${idOf(r)} ${rule.alert ?? rule.record}`, expr: String(rule.expr) }))),
  );
  const keda = ofKind<IScaledObject>(objects, 'ScaledObject').flatMap((s) =>
    (s.spec?.triggers ?? []).filter((t) => t.type === 'prometheus').map((t) => ({ where: `${idOf(s)} prometheus trigger`, expr: t.metadata.query ?? '' })),
  );
  const panels = ((dashboard as { panels?: { title?: string; targets?: { expr?: string }[] }[] } | undefined)?.panels ?? []).flatMap((p) =>
    (p.targets ?? []).map((t) => ({ where: `dashboard panel "${p.title}"`, expr: t.expr ?? '' })),
  );
  return [...rules, ...keda, ...panels];
}

/** A namespace written into a query must be the one the objects are deployed to. */
export function namespaceProblems(objects: readonly K8sObject[], queries: { where: string; expr: string }[]): string[] {
  const namespace = objects.find((o) => o.metadata.namespace !== undefined)?.metadata.namespace;
  return queries.flatMap(({ where, expr }) =>
    [...expr.matchAll(/namespace\s*=\s*"([^"$]*)"/g)].filter((m) => m[1] !== namespace).map((m) => `${where}: asks for namespace ${m[1]}, not ${namespace}`),
  );
}

/** Every `pmatch_*` or `webhook_*` metric a query reads is defined by the code, or listed as not yet defined. */
export function metricNameProblems(queries: { where: string; expr: string }[], definedNames: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const { where, expr } of queries) {
    for (const [name] of expr.matchAll(/\b(?:pmatch|webhook)_[a-z0-9_]+/g)) {
      const metric = name.replace(/_(bucket|sum|count)$/, '');
      if (!definedNames.has(metric) && !METRICS_AHEAD_OF_THE_SERVICES.includes(metric)) problems.push(`${where}: reads ${metric}, which no service defines`);
    }
  }
  return problems;
}

/** Every alert has a section of its own name in the operations guide. */
export function alertDocumentationProblems(objects: readonly K8sObject[], guide: string): string[] {
  return ofKind<IPrometheusRule>(objects, 'PrometheusRule').flatMap((r) =>
    (r.spec?.groups ?? [])
      .flatMap((g) => g.rules ?? [])
      .flatMap((rule) => {
        if (rule.alert === undefined) return [];
        const problems: string[] = [];
        if (!new RegExp(`^### ${rule.alert}$`, 'm').test(guide))
          problems.push(`${idOf(r)}: alert ${rule.alert} has no "### ${rule.alert}" section in docs/OPERATIONS.md`);
        if (rule.annotations?.runbook !== `docs/OPERATIONS.md#${rule.alert.toLowerCase()}`)
          problems.push(`${idOf(r)}: alert ${rule.alert} does not link its section`);
        return problems;
      }),
  );
}
