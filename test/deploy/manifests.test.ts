import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { placementProblems } from './support/checks-objects';
import { SET_AHEAD_OF_THE_SERVICES, imageProblems, podProblems, securityProblems } from './support/checks-pods';
import { ingressProblems, networkPolicyProblems, serviceProblems } from './support/checks-network';
import {
  METRICS_AHEAD_OF_THE_SERVICES,
  alertDocumentationProblems,
  autoscalingProblems,
  disruptionProblems,
  metricNameProblems,
  namespaceProblems,
  queriesOf,
  queueScalingProblems,
} from './support/checks-scaling';
import { dashboardOf, renderAll, type Rendered } from './support/fixtures';
import { ofKind } from './support/render';
import { schemaProblems, unknownFieldProblems } from './support/schemas';

let all: Rendered;
beforeAll(() => {
  all = renderAll();
});

const OVERLAYS = [
  { overlay: 'local', minReplicas: 1, tls: false },
  { overlay: 'production', minReplicas: 2, tls: true },
] as const;

describe.each(OVERLAYS)('deploy/k8s/overlays/$overlay', ({ overlay, minReplicas, tls }) => {
  const objects = () => all[overlay];

  test('when rendered, then every object validates against its Kubernetes or CRD schema', () => {
    expect(objects().length).toBeGreaterThan(20);
    expect(objects().flatMap(schemaProblems)).toEqual([]);
  });

  test('when rendered, then every object is in the namespace the render creates, labelled as part of pmatch', () => {
    expect(placementProblems(objects())).toEqual([]);
  });

  test('when rendered, then every Deployment is a service running its built entry point from its own image', () => {
    expect(imageProblems(objects(), all.repo)).toEqual([]);
  });

  test('when rendered, then every probe asks the admin port for a path the services serve, and each service gets all it needs and its own credentials', () => {
    expect(podProblems(objects(), all.secrets, all.repo)).toEqual([]);
  });

  test('when rendered, then every container runs non-root, read-only, without capabilities, with requests and limits', () => {
    expect(securityProblems(objects())).toEqual([]);
  });

  test('when rendered, then the NetworkPolicies deny by default, select existing pods and open only what each service needs', () => {
    expect(networkPolicyProblems(objects())).toEqual([]);
    expect(serviceProblems(objects())).toEqual([]);
  });

  test('when rendered, then the Ingress sends each public path to the service that answers it, at PUBLIC_BASE_URL', () => {
    expect(ingressProblems(objects(), { tls })).toEqual([]);
  });

  test(`when rendered, then no service runs fewer than ${minReplicas} replicas, each has one disruption budget, and no apply resets a replica count`, () => {
    expect(autoscalingProblems(objects(), { minReplicas })).toEqual([]);
    expect(disruptionProblems(objects())).toEqual([]);
  });

  test('when rendered, then it holds no Secret, so applying a release cannot overwrite one', () => {
    expect(ofKind(objects(), 'Secret').map((s) => s.metadata.name)).toEqual([]);
  });
});

describe('deploy/k8s/overlays/production monitoring and autoscaling', () => {
  test('when rendered, then the HTTP services scale on CPU and the matcher and dispatcher on their queues', () => {
    const hpaTargets = ofKind<IHorizontalPodAutoscaler>(all.production, 'HorizontalPodAutoscaler')
      .map((h) => h.spec?.scaleTargetRef.name)
      .sort();
    const kedaTargets = ofKind<IScaledObject>(all.production, 'ScaledObject')
      .map((s) => s.spec?.scaleTargetRef.name)
      .sort();
    expect(hpaTargets).toEqual(['bank-ingest', 'orders-api']);
    expect(kedaTargets).toEqual(['matcher', 'webhook-dispatcher']);
    expect(queueScalingProblems(all.production, all.secrets, all.repo.queues)).toEqual([]);
  });

  test('when rendered, then every query names this namespace and metrics the services define or are to define', () => {
    const queries = queriesOf(all.production, dashboardOf(all.production));
    expect(queries.length).toBeGreaterThan(20);
    expect(namespaceProblems(all.production, queries)).toEqual([]);
    expect(metricNameProblems(queries, all.repo.definedNames)).toEqual([]);
  });

  test('when rendered, then every alert links a section of docs/OPERATIONS.md that says what it means and what to do', () => {
    expect(alertDocumentationProblems(all.production, all.guide)).toEqual([]);
  });
});

describe('every rendered object', () => {
  test('when type-checked against its kind, then it has no field the kind does not know', () => {
    expect(unknownFieldProblems([...all.local, ...all.production, ...all.secrets])).toEqual([]);
  });
});

describe('deploy/k8s/secret-templates', () => {
  test('when rendered, then every template validates and none holds a value a service would accept', () => {
    expect(all.secrets.flatMap(schemaProblems)).toEqual([]);
    expect(
      all.secrets.every((s) => Object.values((s as { stringData?: Record<string, string> }).stringData ?? {}).every((v) => v.startsWith('REPLACE-ME'))),
    ).toBe(true);
  });
});

describe('what the manifests set ahead of the services', () => {
  test('when a service reads a variable the manifests set ahead of it, then the variable leaves SET_AHEAD_OF_THE_SERVICES', () => {
    const readNow = SET_AHEAD_OF_THE_SERVICES.filter((variable) => [...all.repo.services.values()].some((s) => variable in s.schema.shape));
    expect(readNow).toEqual([]);
  });

  test('when the code defines a metric the manifests read ahead of it, then the metric leaves METRICS_AHEAD_OF_THE_SERVICES', () => {
    expect(METRICS_AHEAD_OF_THE_SERVICES.filter((metric) => all.repo.definedNames.has(metric))).toEqual([]);
  });
});
