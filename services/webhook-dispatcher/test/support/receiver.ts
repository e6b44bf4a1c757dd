import { createServer as createHttpsServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { KeyPair } from './tls';

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as it arrived, for signature checks over the raw bytes. */
  body: string;
  /** The TLS server name the sender asked for (SNI): the name its certificate check is made against. */
  servername: string | false | null;
}

/** How the receiver answers a path: a status (and headers), or never. */
export type Behaviour = { status: number; headers?: Record<string, string> } | 'hang';

/**
 * A merchant's webhook receiver: a real HTTPS server on loopback. It records every request and
 * answers per path as told (200 unless told otherwise); "hang" keeps the request open until close.
 */
export class HttpsReceiver {
  readonly requests: ReceivedRequest[] = [];
  connections = 0;
  private readonly behaviours = new Map<string, Behaviour>();
  /** Requests held open by "hang", with their path, until the sender gives up or the receiver closes. */
  private readonly open = new Map<ServerResponse, string>();

  private constructor(
    private readonly server: Server,
    readonly host: string,
  ) {}

  static async start(keyPair: KeyPair, host = '127.0.0.1'): Promise<HttpsReceiver> {
    let receiver: HttpsReceiver | undefined;
    const server = createHttpsServer({ key: keyPair.key, cert: keyPair.cert }, (req, res) => receiver!.handle(req, res));
    receiver = new HttpsReceiver(server, host);
    server.on('secureConnection', () => (receiver!.connections += 1));
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path: string): string {
    const host = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `https://${host}:${this.port}${path}`;
  }

  answer(path: string, behaviour: Behaviour): void {
    this.behaviours.set(path, behaviour);
  }

  requestsTo(path: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** How many requests to `path` are held open right now (the sender has not given up on them). */
  hanging(path: string): number {
    return [...this.open.values()].filter((p) => p === path).length;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      this.requests.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), servername: (req.socket as TLSSocket).servername });
      const behaviour = this.behaviours.get(path) ?? { status: 200 };
      if (behaviour === 'hang') {
        this.open.set(res, path);
        res.on('close', () => this.open.delete(res));
        return;
      }
      res.writeHead(behaviour.status, behaviour.headers).end('ok');
    });
  }

  async close(): Promise<void> {
    for (const res of this.open.keys()) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A listener that only counts connections: anything reaching it means an address check failed. */
export class Canary {
  connections = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: NetServer,
    readonly host: string,
  ) {}

  static async start(host: string): Promise<Canary> {
    let canary: Canary | undefined;
    const server = createNetServer((socket) => {
      canary!.connections += 1;
      canary!.sockets.add(socket);
      socket.on('close', () => canary!.sockets.delete(socket));
    });
    canary = new Canary(server, host);
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return canary;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
