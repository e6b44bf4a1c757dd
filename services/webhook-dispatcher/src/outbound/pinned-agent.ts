import { createSecureContext, rootCertificates } from 'node:tls';
import { type AddressPolicy, DNS_LOOKUP_TIMEOUT_MS, vetHost, type ResolveHost } from '@pmatch/platform';
import { Agent, buildConnector, type Dispatcher } from 'undici';

export interface PinnedAgentOptions {
  policy: AddressPolicy;
  resolve: ResolveHost;
  /** PEM of one more CA to trust besides Node's bundle (WEBHOOK_CA_FILE, test receivers only). */
  extraCa?: string;
  connectTimeoutMs: number;
  /** How long a host name may take to resolve before the connection is refused. */
  lookupTimeoutMs?: number;
  /**
   * Opens the connection once the address is vetted. Tests replace it with a tripwire to prove
   * that a refused address is never connected to; anything else uses undici's own.
   */
  connectVetted?: buildConnector.connector;
}

/**
 * An undici Agent that connects only where the address policy allows. Before every new connection
 * the host is resolved once, EVERY answer is vetted (an attacker's DNS may mix a public address
 * with 127.0.0.1), and the socket is opened to the vetted address itself, so no second lookup can
 * be answered differently (DNS rebinding). IP literals are vetted the same way: undici never asks
 * a custom lookup about them. The certificate is still checked against the URL's host name (SNI
 * and identity), and Node's TLS refuses self-signed and otherwise untrusted certificates.
 */
export function createPinnedAgent(options: PinnedAgentOptions): Agent {
  return new Agent({ connect: pinnedConnector(options, options.connectVetted ?? vettedConnector(options)) });
}

/** undici's own connector, with one TLS context for every connection. */
function vettedConnector(options: Pick<PinnedAgentOptions, 'connectTimeoutMs' | 'extraCa'>): buildConnector.connector {
  return buildConnector({
    timeout: options.connectTimeoutMs,
    rejectUnauthorized: true,
    // Built once: given CA options instead, every new connection would parse Node's ~140 root
    // certificates into a context of its own.
    secureContext: createSecureContext(options.extraCa === undefined ? {} : { ca: [...rootCertificates, options.extraCa] }),
  });
}

function pinnedConnector(options: PinnedAgentOptions, connectVetted: buildConnector.connector): buildConnector.connector {
  const connect: buildConnector.connector = (target, callback) => {
    if (target.protocol !== 'https:') {
      callback(new Error(`refusing ${target.protocol} connection: webhooks go over https only`), null);
      return;
    }
    // A host with an unreachable address (say IPv6 without a route) is tried at its next one; every
    // address tried has passed the check.
    const connectInTurn = (addresses: string[], index: number): void => {
      connectVetted({ ...target, hostname: addresses[index]! }, (...result) => {
        if (result[0] !== null && index + 1 < addresses.length) connectInTurn(addresses, index + 1);
        else callback(...result);
      });
    };
    vetHost(target.hostname, options.policy, options.resolve, { lookupTimeoutMs: options.lookupTimeoutMs ?? DNS_LOOKUP_TIMEOUT_MS }).then(
      (addresses) => connectInTurn(addresses, 0),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
    );
  };
  return connect;
}

/** An organisation unused this long has its agent (and its idle connections) closed. */
const IDLE_AGENT_MS = 10 * 60_000;

/**
 * A pinned agent per organisation, so that one merchant's DNS or hanging connections never take
 * what another's deliveries need: each organisation has at most `lookupsPerOrganisation` host
 * lookups in flight (more wait for a free one within the lookup deadline, then are refused), and a
 * connection pool of its own. One TLS context serves them all. docs/decisions/0066-webhook-dns-lookups-cancellable-and-capped.md
 */
export class AgentsByOrganisation {
  private readonly agents = new Map<string, { agent: Agent; usedAt: number }>();
  private readonly connectVetted: buildConnector.connector;
  private lastSweep = Date.now();

  constructor(private readonly options: PinnedAgentOptions & { lookupsPerOrganisation: number }) {
    this.connectVetted = options.connectVetted ?? vettedConnector(options);
  }

  for(organisationId: string): Dispatcher {
    const now = Date.now();
    if (now - this.lastSweep > IDLE_AGENT_MS) this.closeIdle(now);
    let entry = this.agents.get(organisationId);
    if (entry === undefined) {
      const lookupTimeoutMs = this.options.lookupTimeoutMs ?? DNS_LOOKUP_TIMEOUT_MS;
      const resolve = limitConcurrency(this.options.resolve, this.options.lookupsPerOrganisation, lookupTimeoutMs);
      entry = { agent: new Agent({ connect: pinnedConnector({ ...this.options, resolve, lookupTimeoutMs }, this.connectVetted) }), usedAt: now };
      this.agents.set(organisationId, entry);
    }
    entry.usedAt = now;
    return entry.agent;
  }

  async close(): Promise<void> {
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map((entry) => entry.agent.close()));
  }

  private closeIdle(now: number): void {
    this.lastSweep = now;
    for (const [organisationId, entry] of this.agents) {
      if (now - entry.usedAt < IDLE_AGENT_MS) continue;
      this.agents.delete(organisationId);
      void entry.agent.close().catch(() => undefined);
    }
  }
}

/**
 * `resolve` with at most `max` calls in flight; a call waiting longer than `waitMs` for its turn
 * is refused (the lookup deadline has passed for it anyway).
 */
export function limitConcurrency(resolve: ResolveHost, max: number, waitMs: number): ResolveHost {
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    running -= 1;
    const next = waiting.shift();
    if (next !== undefined) next();
  };
  return async (hostname) => {
    if (running >= max) {
      await new Promise<void>((resolveTurn, reject) => {
        const turn = () => {
          clearTimeout(timer);
          resolveTurn();
        };
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(turn), 1);
          reject(new Error(`more than ${max} host lookups of this organisation were waiting`));
        }, waitMs);
        waiting.push(turn);
      });
    }
    running += 1;
    try {
      return await resolve(hostname);
    } finally {
      release();
    }
  };
}
