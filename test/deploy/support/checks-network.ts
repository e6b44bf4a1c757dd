import { isIP } from 'node:net';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { INetworkPolicyPeer } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyPeer';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IService } from 'kubernetes-models/v1/Service';
import { BankIngestConfig } from '../../../services/bank-ingest/src/config';
import { idOf, matches, ofKind, type K8sObject } from './render';
import { portNumber, workloadsOf, type Workload } from './workloads';

/** Where traffic may come from, by port name: the public port from the ingress controller, admin from monitoring. */
const ALLOWED_SOURCES: Record<string, string> = { http: 'ingress-nginx', admin: 'monitoring' };
const INTERNET = ['0.0.0.0/0', '::/0', '2000::/3'];
/** The only service that may reach the internet, and only on HTTPS. */
const INTERNET_CLIENT = 'webhook-dispatcher';
/** The Ingress routes, by path prefix, to the service that answers them. */
export const ROUTES: Record<string, string> = {
  '/v1': 'orders-api',
  '/pay': 'orders-api',
  '/link': 'orders-api',
  '/dashboard': 'orders-api',
  '/docs': 'orders-api',
  '/ingest': 'bank-ingest',
  '/ingest/v1/statements': 'bank-ingest',
};

/** A path whose requests carry files: the Ingress routing it must let bodies as large as the service takes through. */
const STATEMENTS_PATH = '/ingest/v1/statements';
const BODY_SIZE = 'nginx.ingress.kubernetes.io/proxy-body-size';

/** ingress-nginx's size notation (`2m`, `512k`, `1g`, bytes without a unit) in bytes; NaN if it is not one. */
function sizeInBytes(size: string | undefined): number {
  const match = /^([0-9]+)([kmg]?)$/i.exec(size ?? '');
  if (match === null) return NaN;
  return Number(match[1]) * 1024 ** ['', 'k', 'm', 'g'].indexOf(match[2]!.toLowerCase());
}

/** The ports an SMTP relay listens on (SMTP_URL's): submission, smtps, plain. */
const SMTP_PORTS = [587, 465, 25];
/** The dispatcher mails owners through SMTP_URL's relay. */
const MAIL_CLIENT = 'webhook-dispatcher';

/** An IPv4 or IPv6 CIDR that Node reads (what NetworkPolicy's ipBlock takes). */
function isCidr(cidr: string | undefined): boolean {
  const match = /^(.+)\/(\d{1,3})$/.exec(cidr ?? '');
  if (match === null) return false;
  const version = isIP(match[1]!);
  return version !== 0 && Number(match[2]) <= (version === 4 ? 32 : 128);
}

const namespaceOf = (peer: INetworkPolicyPeer) => peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'];

/**
 * Default deny; every policy selects pods that exist and opens only ports they have; public and
 * admin ports only to their callers; DNS for everyone; every way out to named destinations (pods,
 * namespaces or CIDRs); the internet for the dispatcher, on 443 only, and its SMTP relay.
 */
export function networkPolicyProblems(objects: readonly K8sObject[]): string[] {
  const problems: string[] = [];
  const workloads = workloadsOf(objects);
  const policies = ofKind<INetworkPolicy>(objects, 'NetworkPolicy');
  const selected = (p: INetworkPolicy & K8sObject): Workload[] =>
    workloads.filter((w) => w.namespace === p.metadata.namespace && matches(p.spec?.podSelector.matchLabels, w.labels));
  const isDefaultDeny = (p: INetworkPolicy) =>
    Object.keys(p.spec?.podSelector.matchLabels ?? {}).length === 0 &&
    p.spec?.podSelector.matchExpressions === undefined &&
    (['Ingress', 'Egress'] as const).every((t) => p.spec?.policyTypes?.includes(t)) &&
    p.spec?.ingress === undefined &&
    p.spec?.egress === undefined;
  if (!policies.some(isDefaultDeny)) problems.push('no default-deny NetworkPolicy (empty podSelector, Ingress and Egress, no rules)');
  for (const policy of policies) {
    const id = idOf(policy);
    const pods = selected(policy);
    if (policy.spec?.podSelector.matchExpressions !== undefined) problems.push(`${id}: uses matchExpressions, which this check does not read`);
    if (pods.length === 0) problems.push(`${id}: selects no pod`);
    for (const rule of policy.spec?.ingress ?? []) {
      if ((rule.from ?? []).length === 0) problems.push(`${id}: an ingress rule lets in anyone`);
      for (const { port } of rule.ports ?? [{}]) {
        if (port === undefined) problems.push(`${id}: an ingress rule opens every port`);
        for (const w of pods) if (portNumber(w.main, port) === undefined) problems.push(`${id}: opens port ${String(port)}, which ${w.name} does not have`);
        const source = typeof port === 'string' ? ALLOWED_SOURCES[port] : undefined;
        if (source === undefined) problems.push(`${id}: opens port ${String(port)}, which is neither http nor admin`);
        else if (!(rule.from ?? []).every((peer) => namespaceOf(peer) === source && peer.ipBlock === undefined)) {
          problems.push(`${id}: port ${String(port)} is open to others than the ${source} namespace`);
        }
      }
    }
    for (const rule of policy.spec?.egress ?? []) {
      const toInternet = (rule.to ?? []).some((peer) => INTERNET.includes(peer.ipBlock?.cidr ?? ''));
      if ((rule.to ?? []).length === 0 && (rule.ports ?? []).length === 0) problems.push(`${id}: an egress rule lets out everything`);
      else if ((rule.to ?? []).length === 0)
        problems.push(`${id}: lets out on ${(rule.ports ?? []).map((p) => p.port).join(', ')} to any address, not named destinations`);
      for (const peer of rule.to ?? []) {
        if (peer.ipBlock !== undefined && !isCidr(peer.ipBlock.cidr)) problems.push(`${id}: ${peer.ipBlock.cidr} is not a CIDR`);
      }
      if (!toInternet) continue;
      const ports = (rule.ports ?? []).map((p) => p.port);
      if (ports.length !== 1 || ports[0] !== 443)
        problems.push(`${id}: lets out to the internet on ${ports.length === 0 ? 'every port' : ports.join(', ')}, not 443 only`);
      for (const w of pods) if (w.name !== INTERNET_CLIENT) problems.push(`${id}: lets ${w.name} out to the internet`);
    }
  }
  for (const w of workloads.filter((w) => w.name === MAIL_CLIENT)) {
    const smtp = policies.some(
      (p) =>
        selected(p).includes(w) &&
        (p.spec?.egress ?? []).some(
          (r) => (r.to ?? []).some((peer) => isCidr(peer.ipBlock?.cidr)) && (r.ports ?? []).some((port) => SMTP_PORTS.includes(Number(port.port))),
        ),
    );
    if (!smtp) problems.push(`${w.id}: no NetworkPolicy lets it reach an SMTP relay (port ${SMTP_PORTS.join(', ')}) at named addresses`);
  }
  for (const w of workloads) {
    const dns = policies.some((p) => selected(p).includes(w) && (p.spec?.egress ?? []).some((r) => (r.ports ?? []).some((port) => port.port === 53)));
    if (!dns) problems.push(`${w.id}: no NetworkPolicy lets it ask DNS`);
  }
  return problems;
}

/** Every Service selects pods that exist and targets ports they have. */
export function serviceProblems(objects: readonly K8sObject[]): string[] {
  const problems: string[] = [];
  const workloads = workloadsOf(objects);
  for (const service of ofKind<IService>(objects, 'Service')) {
    const pods = workloads.filter((w) => w.namespace === service.metadata.namespace && matches(service.spec?.selector, w.labels));
    if (pods.length === 0) problems.push(`${idOf(service)}: selects no pod`);
    for (const port of service.spec?.ports ?? []) {
      for (const w of pods) {
        if (portNumber(w.main, port.targetPort ?? port.port) === undefined)
          problems.push(`${idOf(service)}: targets port ${String(port.targetPort)}, which ${w.name} does not have`);
      }
    }
  }
  return problems;
}

/**
 * The routes go to the services that answer them, through Service ports that exist and are public;
 * with `tls`, every host has a certificate. PUBLIC_BASE_URL (the payment links) names the host.
 */
export function ingressProblems(objects: readonly K8sObject[], options: { tls: boolean }): string[] {
  const problems: string[] = [];
  const services = ofKind<IService>(objects, 'Service');
  const ingresses = ofKind<IIngress>(objects, 'Ingress');
  const routed = new Map<string, string>();
  for (const ingress of ingresses) {
    for (const rule of ingress.spec?.rules ?? []) {
      if (options.tls && !(ingress.spec?.tls ?? []).some((t) => t.hosts?.includes(rule.host ?? ''))) problems.push(`${idOf(ingress)}: ${rule.host} has no TLS`);
      for (const path of rule.http?.paths ?? []) {
        const backend = path.backend.service;
        const service = services.find((s) => s.metadata.name === backend?.name);
        const port = service?.spec?.ports?.find((p) => (backend?.port?.name !== undefined ? p.name === backend.port.name : p.port === backend?.port?.number));
        if (service === undefined || port === undefined) {
          problems.push(`${idOf(ingress)}: ${path.path} goes to ${backend?.name}:${backend?.port?.name ?? backend?.port?.number}, which does not exist`);
          continue;
        }
        if (port.name !== 'http') problems.push(`${idOf(ingress)}: ${path.path} goes to port ${port.name}, not a public port`);
        routed.set(path.path ?? '', service.spec?.selector?.['app.kubernetes.io/name'] ?? '');
      }
      const baseUrl = ofKind<IConfigMap>(objects, 'ConfigMap')
        .map((c) => c.data?.PUBLIC_BASE_URL)
        .find((u) => u !== undefined);
      if (baseUrl === undefined || new URL(baseUrl).host !== rule.host)
        problems.push(`${idOf(ingress)}: host ${rule.host} is not PUBLIC_BASE_URL's (${baseUrl})`);
      else if (options.tls && !baseUrl.startsWith('https:')) problems.push(`${idOf(ingress)}: PUBLIC_BASE_URL ${baseUrl} is not https`);
    }
  }
  for (const [path, service] of Object.entries(ROUTES)) {
    if (routed.get(path) !== service) problems.push(`Ingress: ${path} does not go to ${service}`);
  }
  const configured = ofKind<IConfigMap>(objects, 'ConfigMap')
    .map((c) => c.data?.STATEMENT_MAX_BYTES)
    .find((v) => v !== undefined);
  const statementMaxBytes = BankIngestConfig.shape.STATEMENT_MAX_BYTES.parse(configured);
  for (const ingress of ingresses.filter((i) => (i.spec?.rules ?? []).some((r) => r.http?.paths.some((p) => p.path === STATEMENTS_PATH)))) {
    const limit = ingress.metadata?.annotations?.[BODY_SIZE];
    if (!(sizeInBytes(limit) >= statementMaxBytes)) {
      problems.push(
        `${idOf(ingress)}: ${STATEMENTS_PATH} takes bodies of ${limit ?? 'the default size'}, less than bank-ingest's STATEMENT_MAX_BYTES (${statementMaxBytes})`,
      );
    }
  }
  for (const [path] of routed) if (!(path in ROUTES)) problems.push(`Ingress: routes ${path}, which no service answers publicly`);
  return problems;
}
