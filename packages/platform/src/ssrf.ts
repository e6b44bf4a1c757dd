import { Resolver, lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { AppError } from '@pmatch/contracts';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/**
 * Where merchants' webhook URLs may lead (docs/decisions/0018-webhook-connections-vetted-and-pinned.md). A URL is refused
 * unless it is https and every address its host stands for is public unicast: loopback, RFC 1918,
 * link-local (169.254.169.254), CGNAT, unique-local, IPv4-mapped, NAT64, 6to4, Teredo, multicast
 * and reserved ranges are all "not unicast" to ipaddr.js once `process` has unwrapped IPv4-mapped
 * IPv6. Checked at registration and again before every connection, because DNS answers change.
 */

/** All addresses a host name resolves to, as the system resolver answers (A and AAAA). */
export type ResolveHost = (hostname: string) => Promise<string[]>;

export const resolveWithSystem: ResolveHost = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((answer) => answer.address);

export interface CancellableResolverOptions {
  /** Name servers (`1.2.3.4`, `1.2.3.4:53`, `[2001:db8::1]:53`); none: the system's (resolv.conf). */
  servers?: readonly string[];
  /** When the lookup's queries are cancelled, both families and every try. */
  timeoutMs: number;
}

/** How long the other family may still answer once one has (A before AAAA, or the other way round). */
const SECOND_FAMILY_GRACE_MS = 250;

/**
 * A and AAAA through node:dns `Resolver` (c-ares), not `dns.lookup` (getaddrinfo on one of libuv's
 * four worker threads, held until the system resolver gives up, whatever the caller's deadline):
 * a name server that never answers holds no thread, and at `timeoutMs` the lookup's queries are
 * cancelled. Each lookup has a resolver of its own, so cancelling it touches no other. It reads no
 * hosts file: webhook hosts are public names. docs/decisions/0066-webhook-dns-lookups-cancellable-and-capped.md
 */
export function createCancellableResolver(options: CancellableResolverOptions): ResolveHost {
  // c-ares waits `timeout` for the first try and longer for the next: two tries fit in the deadline.
  const resolverOptions = { timeout: Math.max(50, Math.floor(options.timeoutMs / 3)), tries: 2 };
  return async (hostname) => {
    const resolver = new Resolver(resolverOptions);
    if (options.servers !== undefined && options.servers.length > 0) resolver.setServers([...options.servers]);
    const deadline = setTimeout(() => resolver.cancel(), options.timeoutMs);
    let grace: NodeJS.Timeout | undefined;
    const oneAnswered = () => {
      grace ??= setTimeout(() => resolver.cancel(), SECOND_FAMILY_GRACE_MS);
    };
    try {
      const families = [resolver.resolve4(hostname), resolver.resolve6(hostname)];
      for (const family of families) family.then(oneAnswered, () => undefined);
      const [v4, v6] = await Promise.allSettled(families);
      const addresses = [v4, v6].flatMap((answer) => (answer!.status === 'fulfilled' ? answer!.value : []));
      if (addresses.length === 0 && v4!.status === 'rejected') throw v4!.reason;
      return addresses;
    } finally {
      clearTimeout(deadline);
      clearTimeout(grace);
    }
  };
}

/** `ip`, `ip:port` or `[ipv6]:port`, as `Resolver.setServers` takes them. */
export function isNameServer(text: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  if (bracketed !== null) return isIP(bracketed[1]!) === 6 && (bracketed[2] === undefined || Number(bracketed[2]) <= 65535);
  if (isIP(text) !== 0) return true;
  const withPort = /^([^:]+):(\d{1,5})$/.exec(text);
  return withPort !== null && isIP(withPort[1]!) === 4 && Number(withPort[2]) <= 65535;
}

/** IPv6 global unicast is 2000::/3; anything outside it (e.g. IPv4-compatible ::a.b.c.d) is not public. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * WEBHOOK_ALLOWED_CIDRS: comma-separated ranges exempt from the public-address rule. It exists
 * for test receivers on loopback; the default, empty, exempts nothing.
 */
export const AllowedCidrsSetting = z
  .string()
  .default('')
  .transform((text, ctx) => {
    const cidrs = text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    for (const cidr of cidrs) {
      try {
        ipaddr.parseCIDR(cidr);
      } catch {
        ctx.addIssue({ code: 'custom', message: `"${cidr}" is not a CIDR range such as 127.0.0.0/8` });
      }
    }
    return cidrs;
  });

export class AddressPolicy {
  private readonly exempt: Cidr[];

  constructor(allowedCidrs: readonly string[] = []) {
    this.exempt = allowedCidrs.map((cidr) => ipaddr.parseCIDR(cidr));
  }

  /** Whether a connection to this IP address may be made. */
  allows(address: string): boolean {
    if (!ipaddr.isValid(address)) return false;
    const ip = ipaddr.process(address);
    if (isPublicUnicast(ip)) return true;
    return this.exempt.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits));
  }
}

function isPublicUnicast(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (ip.range() !== 'unicast') return false;
  return ip.kind() === 'ipv4' || ip.match(GLOBAL_UNICAST_V6);
}

function notAllowed(message: string, cause?: unknown): AppError {
  return new AppError('url_not_allowed', message, { param: 'url', ...(cause === undefined ? {} : { cause }) });
}

/** How long a host name may take to resolve before the URL is refused (registration and delivery). */
export const DNS_LOOKUP_TIMEOUT_MS = 5_000;

/**
 * The addresses a connection to `hostname` may use: every one must pass the policy, or none is
 * given. IP literals are checked as they are, names for this machine refused before any lookup.
 * A refusal reads the same whatever the host resolved to and never names its addresses (merchants
 * see it); they go into the error's cause, for our logs (docs/decisions/0018-webhook-connections-vetted-and-pinned.md).
 */
export async function vetHost(hostname: string, policy: AddressPolicy, resolve: ResolveHost, options: { lookupTimeoutMs?: number } = {}): Promise<string[]> {
  const host = hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) throw notAllowed(`${host} is this machine; webhook URLs must be public.`);
  const notPublic = (cause: unknown) => notAllowed(`${host} does not resolve to a public address; webhook URLs must reach the public internet.`, cause);
  if (isIP(host) !== 0) {
    if (!policy.allows(host)) throw notAllowed(`${host} is not a public address.`);
    return [host];
  }
  const addresses = await resolveWithin(host, resolve, options.lookupTimeoutMs ?? DNS_LOOKUP_TIMEOUT_MS).catch((error: unknown) => {
    if (error instanceof AppError) throw error;
    throw notPublic(error);
  });
  if (addresses.length === 0) throw notPublic(new Error(`${host} resolved to no address`));
  const refused = addresses.filter((address) => !policy.allows(address));
  if (refused.length > 0) throw notPublic(new Error(`${host} resolved to ${refused.join(', ')}`));
  return addresses;
}

/** The resolver's answer, or a clear refusal once `timeoutMs` has passed without one. */
async function resolveWithin(host: string, resolve: ResolveHost, timeoutMs: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(notAllowed(`Looking up ${host} took longer than ${timeoutMs / 1000} s; check the host name and its DNS, then try again.`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([resolve(host), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A webhook URL as registered: https only, no credentials, and a host that passes `vetHost`. */
export async function vetWebhookUrl(text: string, policy: AddressPolicy, resolve: ResolveHost, options: { lookupTimeoutMs?: number } = {}): Promise<URL> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new AppError('parameter_invalid', 'url must be an absolute URL such as https://example.com/webhooks.', { param: 'url' });
  }
  if (url.protocol !== 'https:') throw notAllowed('Only https URLs are accepted.');
  if (url.username !== '' || url.password !== '') throw notAllowed('The URL must not carry a user name or password.');
  await vetHost(url.hostname, policy, resolve, options);
  return url;
}
