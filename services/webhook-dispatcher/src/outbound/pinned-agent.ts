import { createSecureContext, rootCertificates } from 'node:tls';
import { type AddressPolicy, vetHost, type ResolveHost } from '@pmatch/platform';
import { Agent, buildConnector } from 'undici';

export interface PinnedAgentOptions {
  policy: AddressPolicy;
  resolve: ResolveHost;
  /** PEM of one more CA to trust besides Node's bundle (WEBHOOK_CA_FILE, test receivers only). */
  extraCa?: string;
  connectTimeoutMs: number;
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
  const connectVetted =
    options.connectVetted ??
    buildConnector({
      timeout: options.connectTimeoutMs,
      rejectUnauthorized: true,
      // Built once: given CA options instead, every new connection would parse Node's ~140 root
      // certificates into a context of its own.
      secureContext: createSecureContext(options.extraCa === undefined ? {} : { ca: [...rootCertificates, options.extraCa] }),
    });
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
    vetHost(target.hostname, options.policy, options.resolve).then(
      (addresses) => connectInTurn(addresses, 0),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
    );
  };
  return new Agent({ connect });
}
