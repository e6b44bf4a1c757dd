import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { placementProblems } from './support/checks-objects';
import { imageProblems, podProblems, securityProblems } from './support/checks-pods';
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
import { schemaProblems, unknownFieldProblems } from './support/schemas';

// Each checker is fed the production render with one thing broken, and must name that thing.

let all: Rendered;
beforeAll(() => {
  all = renderAll();
});

/** A copy of the objects with one change made to it. */
function broken(mutate: (objects: K8sObject[]) => void, objects: K8sObject[] = all.production): K8sObject[] {
  const copy = structuredClone(objects);
  mutate(copy);
  return copy;
}

function find<T = Record<string, unknown>>(objects: K8sObject[], kind: string, name: string): K8sObject & T {
  const found = objects.find((o) => o.kind === kind && o.metadata.name.startsWith(name));
  if (found === undefined) throw new Error(`no ${kind}/${name} rendered`);
  return found as K8sObject & T;
}

function container(objects: K8sObject[], name: string): IContainer {
  const found = find<IDeployment>(objects, 'Deployment', name).spec?.template.spec?.containers.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no container ${name}`);
  return found;
}

const pods = (objects: K8sObject[], secrets = all.secrets) => podProblems(objects, secrets, all.repo);
const mentioning = (...parts: string[]) => expect.arrayContaining([expect.stringMatching(new RegExp(parts.map((p) => p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('[\\s\\S]*')))]);

describe('the schema check', () => {
  test('when a container port is not a number, then the object fails its schema', () => {
    const objects = broken((o) => {
      (container(o, 'matcher').ports as unknown as { containerPort: unknown }[])[0]!.containerPort = 'admin';
    });
    expect(objects.flatMap(schemaProblems)).toEqual(mentioning('Deployment/matcher', 'containerPort must be integer'));
  });

  test('when a field is misspelt, then the type check names it where the schema lets it pass', () => {
    const objects = broken((o) => {
      const probe = container(o, 'orders-api').readinessProbe;
      delete container(o, 'orders-api').readinessProbe;
      (container(o, 'orders-api') as Record<string, unknown>).readinesProbe = probe;
    }).filter((o) => o.kind === 'Deployment');
    expect(objects.flatMap(schemaProblems)).toEqual([]);
    expect(unknownFieldProblems(objects)).toEqual(mentioning('Deployment/orders-api', 'readinesProbe', 'does not exist in type'));
  });

  test('when an object is of an API no schema describes, then it is refused rather than passed', () => {
    const objects = broken((o) => void (find(o, 'ScaledObject', 'matcher').apiVersion = 'keda.sh/v9'));
    expect(objects.flatMap(schemaProblems)).toEqual(mentioning('ScaledObject/matcher', 'no schema'));
  });
});

describe('the placement check', () => {
  test('when an object has no namespace, then it is named: the kubectl context would decide where it goes', () => {
    const objects = broken((o) => void delete find(o, 'ServiceMonitor', 'pmatch').metadata.namespace);
    expect(placementProblems(objects)).toEqual(['ServiceMonitor/pmatch: in namespace (none: the kubectl context decides), not pmatch']);
  });
});

describe('the probe and configuration check', () => {
  test('when a probe asks for a path no service serves, then it is named', () => {
    const objects = broken((o) => void (container(o, 'orders-api').readinessProbe!.httpGet!.path = '/ready'));
    expect(pods(objects)).toEqual(mentioning('Deployment/orders-api', 'readinessProbe asks for /ready', 'do not serve'));
  });

  test('when liveness asks /readyz, then it is refused: a database outage would restart every pod', () => {
    const objects = broken((o) => void (container(o, 'matcher').livenessProbe!.httpGet!.path = '/readyz'));
    expect(pods(objects)).toEqual(mentioning('Deployment/matcher', 'livenessProbe asks for /readyz, not /healthz'));
  });

  test('when a probe asks the public port, then it is named', () => {
    const objects = broken((o) => void (container(o, 'bank-ingest').startupProbe!.httpGet!.port = 'http'));
    expect(pods(objects)).toEqual(mentioning('Deployment/bank-ingest', 'startupProbe probes port http (3001), not the admin port 9101'));
  });

  test('when the admin port variable and the container port disagree, then it is named', () => {
    const objects = broken((o) => void (container(o, 'matcher').env!.find((e) => e.name === 'MATCHER_ADMIN_PORT')!.value = '9200'));
    expect(pods(objects)).toEqual(mentioning('Deployment/matcher', 'port named admin is not MATCHER_ADMIN_PORT (9200)'));
  });

  test('when DATABASE_URL is not provided, then its default, fit only for one machine, is named', () => {
    const objects = broken((o) => void (container(o, 'matcher').env = container(o, 'matcher').env!.filter((e) => e.name !== 'DATABASE_URL')));
    expect(pods(objects)).toEqual(mentioning('Deployment/matcher', 'DATABASE_URL is not set', '127.0.0.1'));
  });

  test('when SECRETS_KEY is not provided, then the service refuses its production configuration', () => {
    const objects = broken((o) => void (container(o, 'orders-api').env = container(o, 'orders-api').env!.filter((e) => e.name !== 'SECRETS_KEY')));
    expect(pods(objects)).toEqual(mentioning('Deployment/orders-api', 'refuses its configuration', 'SECRETS_KEY'));
  });

  test('when a service requires a variable without a default, then its absence is named', () => {
    const facts = all.repo.services.get('bank-ingest')!;
    const repo = {
      ...all.repo,
      services: new Map([...all.repo.services, ['bank-ingest', { ...facts, schema: { shape: { ...facts.schema.shape, BANK_CODE: { safeParse: () => ({ success: false }) } } } }]]),
    };
    expect(podProblems(all.production, all.secrets, repo)).toEqual(mentioning('Deployment/bank-ingest', 'BANK_CODE is required by bank-ingest and not provided'));
  });

  test('when a variable is misspelt, then it is named as one the service does not read', () => {
    const objects = broken((o) => void container(o, 'matcher').env!.push({ name: 'MATCHER_PREFECH', value: '10' }));
    expect(pods(objects)).toEqual(mentioning('Deployment/matcher', 'MATCHER_PREFECH is set, and matcher does not read it'));
  });

  test('when a Secret template holds a value the service accepts, then it is named', () => {
    const secrets = broken((o) => {
      (find(o, 'Secret', 'pmatch-secrets-key') as { stringData: Record<string, string> }).stringData.SECRETS_KEY = 'a-key-that-looks-real-enough';
    }, all.secrets);
    expect(pods(all.production, secrets)).toEqual(mentioning('accepts the placeholder of SECRETS_KEY'));
  });

  test('when a variable reads a Secret key no template has, then it is named', () => {
    const objects = broken((o) => void (container(o, 'orders-api').env!.find((e) => e.name === 'REDIS_URL')!.valueFrom!.secretKeyRef!.key = 'REDIS'));
    expect(pods(objects)).toEqual(mentioning('Deployment/orders-api', 'REDIS_URL reads Secret pmatch-orders-api key REDIS, which no template has'));
  });

  test('when two services share a broker login, then both the sharing and the wrong user are named', () => {
    const objects = broken((o) => void (container(o, 'matcher').env!.find((e) => e.name === 'RABBITMQ_URL')!.valueFrom!.secretKeyRef!.name = 'pmatch-orders-api'));
    expect(pods(objects)).toEqual(mentioning('RABBITMQ_URL comes from pmatch-orders-api/RABBITMQ_URL, which', 'reads too'));
    expect(pods(objects)).toEqual(mentioning('Deployment/matcher', "RABBITMQ_URL's template does not log in as pmatch_matcher"));
  });

  test('when the grace period is shorter than the lock wait a stopping matcher may finish, then it is named', () => {
    const objects = broken((o) => void (find<IDeployment>(o, 'Deployment', 'matcher').spec!.template.spec!.terminationGracePeriodSeconds = 30));
    expect(pods(objects)).toEqual(mentioning('Deployment/matcher', 'terminationGracePeriodSeconds 30 < 35'));
  });

  test('when a service behind the Ingress has no preStop sleep, then it is named', () => {
    const objects = broken((o) => void delete container(o, 'orders-api').lifecycle);
    expect(pods(objects)).toEqual(mentioning('Deployment/orders-api', 'no preStop sleep'));
  });
});

describe('the image and command check', () => {
  test("when a Deployment runs another service's image, then it is named", () => {
    const objects = broken((o) => void (container(o, 'matcher').image = 'registry.example.invalid/pmatch/orders-api:1.0'));
    expect(imageProblems(objects, all.repo)).toEqual(mentioning('Deployment/matcher', 'not the image of matcher'));
  });

  test('when a command names an entry point that was never built, then it is named', () => {
    const objects = broken((o) => void (container(o, 'matcher').command = ['node', 'services/matchr/dist/main.js']));
    expect(imageProblems(objects, all.repo)).toEqual(mentioning('Deployment/matcher', 'services/matchr/dist/main.js, which does not exist'));
  });

  test('when the migrations run from another release than the service, then it is named', () => {
    const objects = broken((o) => void (find<IDeployment>(o, 'Deployment', 'orders-api').spec!.template.spec!.initContainers![0]!.image = 'registry.example.invalid/pmatch/orders-api:old'));
    expect(imageProblems(objects, all.repo)).toEqual(mentioning('Deployment/orders-api', 'container migrate', 'another release'));
  });

  test('when a Deployment is no service of the repository, or a service has none, then both are named', () => {
    const objects = broken((o) => void (find(o, 'Deployment', 'matcher').metadata.name = 'reconciler'));
    expect(imageProblems(objects, all.repo)).toEqual(mentioning('there is no service reconciler'));
    expect(imageProblems(objects, all.repo)).toEqual(mentioning('service matcher has no Deployment'));
  });
});

describe('the security check', () => {
  test('when a container may write its root filesystem, keeps capabilities or has no memory limit, then each is named', () => {
    const objects = broken((o) => {
      const c = container(o, 'webhook-dispatcher');
      c.securityContext = { ...c.securityContext, readOnlyRootFilesystem: false, capabilities: {} };
      delete c.resources!.limits!.memory;
      c.volumeMounts = [];
    });
    expect(securityProblems(objects)).toEqual(
      expect.arrayContaining([
        'Deployment/webhook-dispatcher: container webhook-dispatcher: root filesystem is not read-only',
        'Deployment/webhook-dispatcher: container webhook-dispatcher: does not drop ALL capabilities',
        'Deployment/webhook-dispatcher: container webhook-dispatcher: no memory limit',
        'Deployment/webhook-dispatcher: container webhook-dispatcher: /tmp is not an emptyDir',
      ]),
    );
  });

  test('when a pod may run as root, then it is named', () => {
    const objects = broken((o) => void delete find<IDeployment>(o, 'Deployment', 'bank-ingest').spec!.template.spec!.securityContext!.runAsNonRoot);
    expect(securityProblems(objects)).toEqual(['Deployment/bank-ingest: runAsNonRoot is not true']);
  });
});

describe('the network check', () => {
  const policy = (o: K8sObject[], name: string) => find<{ spec: { podSelector: { matchLabels?: Record<string, string> }; ingress?: unknown[]; egress?: { to?: unknown[]; ports?: { port: unknown }[] }[] } }>(o, 'NetworkPolicy', name);

  test('when a NetworkPolicy selects pods that do not exist, then it is named', () => {
    const objects = broken((o) => void (policy(o, 'matcher').spec.podSelector.matchLabels = { 'app.kubernetes.io/name': 'matchr' }));
    expect(networkPolicyProblems(objects)).toEqual(mentioning('NetworkPolicy/matcher: selects no pod'));
  });

  test('when the admin port is open to every namespace, then it is named', () => {
    const objects = broken((o) => void (policy(o, 'orders-api').spec.ingress = [{ from: [{ namespaceSelector: {} }], ports: [{ port: 'admin' }] }]));
    expect(networkPolicyProblems(objects)).toEqual(mentioning('NetworkPolicy/orders-api: port admin is open to others than the monitoring namespace'));
  });

  test('when a policy opens a port the pod does not have, then it is named', () => {
    const objects = broken((o) => void (policy(o, 'matcher').spec.ingress = [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], ports: [{ port: 'metrics' }] }]));
    expect(networkPolicyProblems(objects)).toEqual(mentioning('NetworkPolicy/matcher: opens port metrics, which matcher does not have'));
  });

  test('when the dispatcher may reach the internet on port 80, or the matcher at all, then each is named', () => {
    const internet = { to: [{ ipBlock: { cidr: '0.0.0.0/0' } }], ports: [{ port: 80 }] };
    const objects = broken((o) => {
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
    const objects = broken((o) => void ((find(o, 'Service', 'matcher-admin') as { spec: { ports: { targetPort: string }[] } }).spec.ports[0]!.targetPort = 'metrics'));
    expect(serviceProblems(objects)).toEqual(['Service/matcher-admin: targets port metrics, which matcher does not have']);
  });

  test('when /ingest goes to orders-api, a host has no TLS and PUBLIC_BASE_URL names another host, then each is named', () => {
    const objects = broken((o) => {
      const ingress = find<{ spec: { tls?: unknown; rules: { http: { paths: { path: string; backend: { service: { name: string } } }[] } }[] } }>(o, 'Ingress', 'pmatch');
      ingress.spec.rules[0]!.http.paths.find((p) => p.path === '/ingest')!.backend.service.name = 'orders-api';
      delete ingress.spec.tls;
      (find(o, 'ConfigMap', 'pmatch-config') as { data: Record<string, string> }).data.PUBLIC_BASE_URL = 'https://pay.example.invalid';
    });
    expect(ingressProblems(objects, { tls: true })).toEqual(
      expect.arrayContaining([
        'Ingress: /ingest does not go to bank-ingest',
        'Ingress/pmatch: payments.example.invalid has no TLS',
        'Ingress/pmatch: host payments.example.invalid is not PUBLIC_BASE_URL\'s (https://pay.example.invalid)',
      ]),
    );
  });
});

describe('the scaling, alerting and metric checks', () => {
  test('when an autoscaled Deployment sets replicas, has a second autoscaler, or may run one replica, then each is named', () => {
    const objects = broken((o) => {
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
    const misspelt = broken((o) => {
      (find(o, 'ScaledObject', 'matcher') as { spec: { triggers: { metadata: { queueName: string } }[] } }).spec.triggers[0]!.metadata.queueName = 'matcher.deposit';
    });
    expect(queueScalingProblems(misspelt, all.secrets, all.repo.queues)).toEqual(
      expect.arrayContaining([expect.stringContaining('watches queue matcher.deposit,'), 'ScaledObject/matcher: does not watch matcher.deposits']),
    );
    const prefixed = broken((o) => void ((find(o, 'ConfigMap', 'pmatch-config') as { data: Record<string, string> }).data.AMQP_PREFIX = 'eu.'));
    expect(queueScalingProblems(prefixed, all.secrets, all.repo.queues)).toEqual(mentioning('ScaledObject/webhook-dispatcher: does not watch eu.webhook-dispatcher.events'));
  });

  test('when a disruption budget allows no eviction, then it is named', () => {
    const objects = broken((o) => void ((find(o, 'PodDisruptionBudget', 'matcher') as { spec: { maxUnavailable: number } }).spec.maxUnavailable = 0));
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
    expect(alertDocumentationProblems(all.production, guide)).toEqual(['PrometheusRule/pmatch: alert PmatchDeadLetters has no "### PmatchDeadLetters" section in docs/OPERATIONS.md']);
  });
});
