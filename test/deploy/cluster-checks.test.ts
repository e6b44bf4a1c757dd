import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import { broken, find, mentioning } from './support/breaking';
import { ingressProblems, networkPolicyProblems, serviceProblems } from './support/checks-network';
import {
  alertDocumentationProblems,
  autoscalingProblems,
  disruptionProblems,
  metricNameProblems,
  namespaceProblems,
  queriesOf,
  queueScalingProblems,
} from './support/checks-scaling';
import { dashboardOf, renderAll, type Rendered } from './support/fixtures';
import type { K8sObject } from './support/render';

// Each checker is fed the production render with one thing broken, and must name that thing.

let all: Rendered;
beforeAll(() => {
  all = renderAll();
});

/** The production render with one change made to it. */
const brokenProduction = (mutate: (objects: K8sObject[]) => void) => broken(all.production, mutate);

describe('the network check', () => {
  const policy = (o: K8sObject[], name: string) =>
    find<{ spec: { podSelector: { matchLabels?: Record<string, string> }; ingress?: unknown[]; egress?: { to?: unknown[]; ports?: { port: unknown }[] }[] } }>(
      o,
      'NetworkPolicy',
      name,
    );

  test('when a NetworkPolicy selects pods that do not exist, then it is named', () => {
    const objects = brokenProduction((o) => void (policy(o, 'matcher').spec.podSelector.matchLabels = { 'app.kubernetes.io/name': 'matchr' }));
    expect(networkPolicyProblems(objects)).toEqual(mentioning('NetworkPolicy/matcher: selects no pod'));
  });

  test('when the admin port is open to every namespace, then it is named', () => {
    const objects = brokenProduction((o) => void (policy(o, 'orders-api').spec.ingress = [{ from: [{ namespaceSelector: {} }], ports: [{ port: 'admin' }] }]));
    expect(networkPolicyProblems(objects)).toEqual(mentioning('NetworkPolicy/orders-api: port admin is open to others than the monitoring namespace'));
  });

  test('when a policy opens a port the pod does not have, then it is named', () => {
    const objects = brokenProduction(
      (o) =>
        void (policy(o, 'matcher').spec.ingress = [
          { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], ports: [{ port: 'metrics' }] },
        ]),
    );
    expect(networkPolicyProblems(objects)).toEqual(mentioning('NetworkPolicy/matcher: opens port metrics, which matcher does not have'));
  });

  test('when the dispatcher may reach the internet on port 80, or the matcher at all, then each is named', () => {
    const internet = { to: [{ ipBlock: { cidr: '0.0.0.0/0' } }], ports: [{ port: 80 }] };
    const objects = brokenProduction((o) => {
      policy(o, 'webhook-dispatcher').spec.egress!.push(internet);
      policy(o, 'matcher').spec.egress!.push({ ...internet, ports: [{ port: 443 }] });
    });
    expect(networkPolicyProblems(objects)).toEqual(mentioning('NetworkPolicy/webhook-dispatcher: lets out to the internet on 80, not 443 only'));
    expect(networkPolicyProblems(objects)).toEqual(mentioning('NetworkPolicy/matcher: lets matcher out to the internet'));
  });

  test('when there is no default deny or no DNS, then both are named', () => {
    const objects = all.production.filter((o) => !(o.kind === 'NetworkPolicy' && ['default-deny', 'dns'].includes(o.metadata.name)));
    expect(networkPolicyProblems(objects)).toEqual(mentioning('no default-deny NetworkPolicy'));
    expect(networkPolicyProblems(objects)).toEqual(mentioning('Deployment/orders-api: no NetworkPolicy lets it ask DNS'));
  });

  test('when a Service targets a port its pods do not have, then it is named', () => {
    const objects = brokenProduction(
      (o) => void ((find(o, 'Service', 'matcher-admin') as { spec: { ports: { targetPort: string }[] } }).spec.ports[0]!.targetPort = 'metrics'),
    );
    expect(serviceProblems(objects)).toEqual(['Service/matcher-admin: targets port metrics, which matcher does not have']);
  });

  test('when /ingest goes to orders-api, a host has no TLS and PUBLIC_BASE_URL names another host, then each is named', () => {
    const objects = brokenProduction((o) => {
      const ingress = find<{ spec: { tls?: unknown; rules: { http: { paths: { path: string; backend: { service: { name: string } } }[] } }[] } }>(
        o,
        'Ingress',
        'pmatch',
      );
      ingress.spec.rules[0]!.http.paths.find((p) => p.path === '/ingest')!.backend.service.name = 'orders-api';
      delete ingress.spec.tls;
      (find(o, 'ConfigMap', 'pmatch-config') as { data: Record<string, string> }).data.PUBLIC_BASE_URL = 'https://pay.example.invalid';
    });
    expect(ingressProblems(objects, { tls: true })).toEqual(
      expect.arrayContaining([
        'Ingress: /ingest does not go to bank-ingest',
        'Ingress/pmatch: payments.example.invalid has no TLS',
        "Ingress/pmatch: host payments.example.invalid is not PUBLIC_BASE_URL's (https://pay.example.invalid)",
      ]),
    );
  });

  test('when the statements path takes smaller bodies than bank-ingest accepts, then it is named', () => {
    const objects = brokenProduction((o) => {
      const statements = find<{ metadata: { annotations: Record<string, string> } }>(o, 'Ingress', 'pmatch-statements');
      statements.metadata.annotations['nginx.ingress.kubernetes.io/proxy-body-size'] = '2m';
    });
    expect(ingressProblems(objects, { tls: true })).toEqual([
      "Ingress/pmatch-statements: /ingest/v1/statements takes bodies of 2m, less than bank-ingest's STATEMENT_MAX_BYTES (67108864)",
    ]);
  });
});

describe('the scaling, alerting and metric checks', () => {
  test('when an autoscaled Deployment sets replicas, has a second autoscaler, or may run one replica, then each is named', () => {
    const objects = brokenProduction((o) => {
      find<IDeployment>(o, 'Deployment', 'orders-api').spec!.replicas = 3;
      const hpa = structuredClone(find(o, 'HorizontalPodAutoscaler', 'bank-ingest')) as K8sObject & { spec: { scaleTargetRef: { name: string } } };
      hpa.metadata.name = 'matcher';
      hpa.spec.scaleTargetRef.name = 'matcher';
      o.push(hpa);
      (find(o, 'ScaledObject', 'webhook-dispatcher') as { spec: { minReplicaCount: number } }).spec.minReplicaCount = 1;
    });
    expect(autoscalingProblems(objects, { minReplicas: 2 })).toEqual(
      expect.arrayContaining([
        'Deployment/orders-api: sets replicas, which its autoscaler owns: every apply would reset it',
        'Deployment/matcher: scaled by HorizontalPodAutoscaler/matcher and ScaledObject/matcher',
        'Deployment/webhook-dispatcher: may run 1 replicas, fewer than 2',
      ]),
    );
  });

  test('when KEDA watches a misspelt queue, or AMQP_PREFIX changes without the queues, then each queue is named', () => {
    const misspelt = brokenProduction((o) => {
      (find(o, 'ScaledObject', 'matcher') as { spec: { triggers: { metadata: { queueName: string } }[] } }).spec.triggers[0]!.metadata.queueName =
        'matcher.deposit';
    });
    expect(queueScalingProblems(misspelt, all.secrets, all.repo.queues)).toEqual(
      expect.arrayContaining([expect.stringContaining('watches queue matcher.deposit,'), 'ScaledObject/matcher: does not watch matcher.deposits']),
    );
    const prefixed = brokenProduction((o) => void ((find(o, 'ConfigMap', 'pmatch-config') as { data: Record<string, string> }).data.AMQP_PREFIX = 'eu.'));
    expect(queueScalingProblems(prefixed, all.secrets, all.repo.queues)).toEqual(
      mentioning('ScaledObject/webhook-dispatcher: does not watch eu.webhook-dispatcher.events'),
    );
  });

  test('when a disruption budget allows no eviction, then it is named', () => {
    const objects = brokenProduction((o) => void ((find(o, 'PodDisruptionBudget', 'matcher') as { spec: { maxUnavailable: number } }).spec.maxUnavailable = 0));
    expect(disruptionProblems(objects)).toEqual(['PodDisruptionBudget/matcher: without maxUnavailable ≥ 1 it blocks every drain while one replica runs']);
  });

  test('when a query names another namespace or a misspelt metric, then both are named', () => {
    const queries = [
      { where: 'alert A', expr: 'kube_deployment_status_replicas_available{namespace="payments"} == 0' },
      { where: 'alert B', expr: 'sum(rate(pmatch_decision_total[5m]))' },
    ];
    expect(namespaceProblems(all.production, queries)).toEqual(['alert A: asks for namespace payments, not pmatch']);
    expect(metricNameProblems(queries, all.repo.definedNames)).toEqual(['alert B: reads pmatch_decision_total, which no service defines']);
    expect(queriesOf(all.production, dashboardOf(all.production)).some((q) => q.where.startsWith('dashboard panel'))).toBe(true);
  });

  test('when an alert has no section in the operations guide, then it is named', () => {
    const guide = all.guide.replace(/^### PmatchDeadLetters$/m, '### Dead letters');
    expect(alertDocumentationProblems(all.production, guide)).toEqual([
      'PrometheusRule/pmatch: alert PmatchDeadLetters has no "### PmatchDeadLetters" section in docs/OPERATIONS.md',
    ]);
  });
});
