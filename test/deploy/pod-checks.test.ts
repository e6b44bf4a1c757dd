import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import { broken, container, find, mentioning } from './support/breaking';
import { placementProblems } from './support/checks-objects';
import { imageProblems, podProblems, securityProblems } from './support/checks-pods';
import { renderAll, type Rendered } from './support/fixtures';
import type { K8sObject } from './support/render';
import { schemaProblems, unknownFieldProblems } from './support/schemas';

// Each checker is fed the production render with one thing broken, and must name that thing.

let all: Rendered;
beforeAll(() => {
  all = renderAll();
});

/** The production render with one change made to it. */
const brokenProduction = (mutate: (objects: K8sObject[]) => void) => broken(all.production, mutate);

const pods = (objects: K8sObject[], secrets = all.secrets) => podProblems(objects, secrets, all.repo);

describe('the schema check', () => {
  test('when a container port is not a number, then the object fails its schema', () => {
    const objects = brokenProduction((o) => {
      (container(o, 'matcher').ports as unknown as { containerPort: unknown }[])[0]!.containerPort = 'admin';
    });
    expect(objects.flatMap(schemaProblems)).toEqual(mentioning('Deployment/matcher', 'containerPort must be integer'));
  });

  test('when a field is misspelt, then the type check names it where the schema lets it pass', () => {
    const objects = brokenProduction((o) => {
      const probe = container(o, 'orders-api').readinessProbe;
      delete container(o, 'orders-api').readinessProbe;
      (container(o, 'orders-api') as unknown as Record<string, unknown>).readinesProbe = probe;
    }).filter((o) => o.kind === 'Deployment');
    expect(objects.flatMap(schemaProblems)).toEqual([]);
    expect(unknownFieldProblems(objects)).toEqual(mentioning('Deployment/orders-api', 'readinesProbe', 'does not exist in type'));
  });

  test('when an object is of an API no schema describes, then it is refused rather than passed', () => {
    const objects = brokenProduction((o) => void (find(o, 'ScaledObject', 'matcher').apiVersion = 'keda.sh/v9'));
    expect(objects.flatMap(schemaProblems)).toEqual(mentioning('ScaledObject/matcher', 'no schema'));
  });
});

describe('the placement check', () => {
  test('when an object has no namespace, then it is named: the kubectl context would decide where it goes', () => {
    const objects = brokenProduction((o) => void delete find(o, 'ServiceMonitor', 'pmatch').metadata.namespace);
    expect(placementProblems(objects)).toEqual(['ServiceMonitor/pmatch: in namespace (none: the kubectl context decides), not pmatch']);
  });
});

describe('the probe and configuration check', () => {
  test('when a probe asks for a path no service serves, then it is named', () => {
    const objects = brokenProduction((o) => void (container(o, 'orders-api').readinessProbe!.httpGet!.path = '/ready'));
    expect(pods(objects)).toEqual(mentioning('Deployment/orders-api', 'readinessProbe asks for /ready', 'do not serve'));
  });

  test('when liveness asks /readyz, then it is refused: a database outage would restart every pod', () => {
    const objects = brokenProduction((o) => void (container(o, 'matcher').livenessProbe!.httpGet!.path = '/readyz'));
    expect(pods(objects)).toEqual(mentioning('Deployment/matcher', 'livenessProbe asks for /readyz, not /healthz'));
  });

  test('when a probe asks the public port, then it is named', () => {
    const objects = brokenProduction((o) => void (container(o, 'bank-ingest').startupProbe!.httpGet!.port = 'http'));
    expect(pods(objects)).toEqual(mentioning('Deployment/bank-ingest', 'startupProbe probes port http (3001), not the admin port 9101'));
  });

  test('when the admin port variable and the container port disagree, then it is named', () => {
    const objects = brokenProduction((o) => void (container(o, 'matcher').env!.find((e) => e.name === 'MATCHER_ADMIN_PORT')!.value = '9200'));
    expect(pods(objects)).toEqual(mentioning('Deployment/matcher', 'port named admin is not MATCHER_ADMIN_PORT (9200)'));
  });

  test('when DATABASE_URL is not provided, then its default, fit only for one machine, is named', () => {
    const objects = brokenProduction((o) => void (container(o, 'matcher').env = container(o, 'matcher').env!.filter((e) => e.name !== 'DATABASE_URL')));
    expect(pods(objects)).toEqual(mentioning('Deployment/matcher', 'DATABASE_URL is not set', '127.0.0.1'));
  });

  test('when SECRETS_KEY is not provided, then the service refuses its production configuration', () => {
    const objects = brokenProduction((o) => void (container(o, 'orders-api').env = container(o, 'orders-api').env!.filter((e) => e.name !== 'SECRETS_KEY')));
    expect(pods(objects)).toEqual(mentioning('Deployment/orders-api', 'refuses its configuration', 'SECRETS_KEY'));
  });

  test('when a service requires a variable without a default, then its absence is named', () => {
    const facts = all.repo.services.get('bank-ingest')!;
    const repo = {
      ...all.repo,
      services: new Map([
        ...all.repo.services,
        ['bank-ingest', { ...facts, schema: { shape: { ...facts.schema.shape, BANK_CODE: { safeParse: () => ({ success: false }) } } } }],
      ]),
    };
    expect(podProblems(all.production, all.secrets, repo)).toEqual(
      mentioning('Deployment/bank-ingest', 'BANK_CODE is required by bank-ingest and not provided'),
    );
  });

  test('when a variable is misspelt, then it is named as one the service does not read', () => {
    const objects = brokenProduction((o) => void container(o, 'matcher').env!.push({ name: 'MATCHER_PREFECH', value: '10' }));
    expect(pods(objects)).toEqual(mentioning('Deployment/matcher', 'MATCHER_PREFECH is set, and matcher does not read it'));
  });

  test('when a Secret template holds a value the service accepts, then it is named', () => {
    const secrets = broken(all.secrets, (o) => {
      (find(o, 'Secret', 'pmatch-secrets-key') as { stringData: Record<string, string> }).stringData.SECRETS_KEY = 'a-key-that-looks-real-enough';
    });
    expect(pods(all.production, secrets)).toEqual(mentioning('accepts the placeholder of SECRETS_KEY'));
  });

  test('when a variable reads a Secret key no template has, then it is named', () => {
    const objects = brokenProduction((o) => void (container(o, 'orders-api').env!.find((e) => e.name === 'REDIS_URL')!.valueFrom!.secretKeyRef!.key = 'REDIS'));
    expect(pods(objects)).toEqual(mentioning('Deployment/orders-api', 'REDIS_URL reads Secret pmatch-orders-api key REDIS, which no template has'));
  });

  test('when two services share a broker login, then both the sharing and the wrong user are named', () => {
    const objects = brokenProduction(
      (o) => void (container(o, 'matcher').env!.find((e) => e.name === 'RABBITMQ_URL')!.valueFrom!.secretKeyRef!.name = 'pmatch-orders-api'),
    );
    expect(pods(objects)).toEqual(mentioning('RABBITMQ_URL comes from pmatch-orders-api/RABBITMQ_URL, which', 'reads too'));
    expect(pods(objects)).toEqual(mentioning('Deployment/matcher', "RABBITMQ_URL's template does not log in as pmatch_matcher"));
  });

  test('when the migrate step declares the broker topology without the topology user, then it is named', () => {
    const migrateOf = (o: K8sObject[]) => find<IDeployment>(o, 'Deployment', 'matcher').spec!.template.spec!.initContainers!.find((c) => c.name === 'migrate')!;
    const asService = brokenProduction(
      (o) => void (migrateOf(o).env!.find((e) => e.name === 'RABBITMQ_URL')!.valueFrom!.secretKeyRef!.name = 'pmatch-matcher'),
    );
    const without = brokenProduction((o) => void (migrateOf(o).env = migrateOf(o).env!.filter((e) => e.name !== 'RABBITMQ_URL')));

    expect(pods(asService)).toEqual(mentioning('Deployment/matcher', "init container migrate's RABBITMQ_URL template does not log in as pmatch_topology"));
    expect(pods(without)).toEqual(mentioning('Deployment/matcher', 'init container migrate has no RABBITMQ_URL from a Secret'));
  });

  test('when the grace period is shorter than the lock wait a stopping matcher may finish, then it is named', () => {
    const objects = brokenProduction((o) => void (find<IDeployment>(o, 'Deployment', 'matcher').spec!.template.spec!.terminationGracePeriodSeconds = 30));
    expect(pods(objects)).toEqual(mentioning('Deployment/matcher', 'terminationGracePeriodSeconds 30 < 35'));
  });

  test('when a service behind the Ingress has no preStop sleep, then it is named', () => {
    const objects = brokenProduction((o) => void delete container(o, 'orders-api').lifecycle);
    expect(pods(objects)).toEqual(mentioning('Deployment/orders-api', 'no preStop sleep'));
  });
});

describe('the image and command check', () => {
  test("when a Deployment runs another service's image, then it is named", () => {
    const objects = brokenProduction((o) => void (container(o, 'matcher').image = 'registry.example.invalid/pmatch/orders-api:1.0'));
    expect(imageProblems(objects, all.repo)).toEqual(mentioning('Deployment/matcher', 'not the image of matcher'));
  });

  test('when a command names an entry point that was never built, then it is named', () => {
    const objects = brokenProduction((o) => void (container(o, 'matcher').command = ['node', 'services/matchr/dist/main.js']));
    expect(imageProblems(objects, all.repo)).toEqual(mentioning('Deployment/matcher', 'services/matchr/dist/main.js, which does not exist'));
  });

  test('when the migrations run from another release than the service, then it is named', () => {
    const objects = brokenProduction(
      (o) =>
        void (find<IDeployment>(o, 'Deployment', 'orders-api').spec!.template.spec!.initContainers![0]!.image =
          'registry.example.invalid/pmatch/orders-api:old'),
    );
    expect(imageProblems(objects, all.repo)).toEqual(mentioning('Deployment/orders-api', 'container migrate', 'another release'));
  });

  test('when a Deployment is no service of the repository, or a service has none, then both are named', () => {
    const objects = brokenProduction((o) => void (find(o, 'Deployment', 'matcher').metadata.name = 'reconciler'));
    expect(imageProblems(objects, all.repo)).toEqual(mentioning('there is no service reconciler'));
    expect(imageProblems(objects, all.repo)).toEqual(mentioning('service matcher has no Deployment'));
  });
});

describe('the security check', () => {
  test('when a container may write its root filesystem, keeps capabilities or has no memory limit, then each is named', () => {
    const objects = brokenProduction((o) => {
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

  test("when bank-ingest's /tmp cannot hold STATEMENT_SPOOL_MAX uploads of STATEMENT_MAX_BYTES and the margin, then it is named", () => {
    const objects = brokenProduction((o) => {
      const volume = find<IDeployment>(o, 'Deployment', 'bank-ingest').spec!.template.spec!.volumes!.find((v) => v.name === 'tmp')!;
      volume.emptyDir = { sizeLimit: '64Mi' };
    });
    expect(securityProblems(objects)).toEqual([
      'Deployment/bank-ingest: container bank-ingest: /tmp holds 64Mi, less than STATEMENT_SPOOL_MAX (4) × STATEMENT_MAX_BYTES (67108864) + 67108864 bytes',
    ]);
  });

  test('when a pod may run as root, then it is named', () => {
    const objects = brokenProduction((o) => void delete find<IDeployment>(o, 'Deployment', 'bank-ingest').spec!.template.spec!.securityContext!.runAsNonRoot);
    expect(securityProblems(objects)).toEqual(['Deployment/bank-ingest: runAsNonRoot is not true']);
  });
});
