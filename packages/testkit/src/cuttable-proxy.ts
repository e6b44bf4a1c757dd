import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy in front of a real server whose connections the test can cut: `cut` ends every
 * connection through it and refuses new ones, as a restarting server does; `resume` lets them in.
 */
export class CuttableProxy {
  private readonly sockets = new Set<Socket>();
  private refusing = false;

  private constructor(private readonly server: Server) {}

  static async start(target: string): Promise<CuttableProxy> {
    const url = new URL(target);
    const port = Number(url.port || (url.protocol === 'amqp:' ? 5672 : 6379));
    let proxy!: CuttableProxy;
    const server = createServer((client) => {
      if (proxy.refusing) {
        client.destroy();
        return;
      }
      const upstream = connect(port, url.hostname);
      for (const [a, b] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        proxy.sockets.add(a);
        a.pipe(b);
        a.on('error', () => b.destroy());
        a.on('close', () => {
          proxy.sockets.delete(a);
          b.destroy();
        });
      }
    });
    proxy = new CuttableProxy(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** `target` with its host and port replaced by the proxy's. */
  url(target: string): string {
    const url = new URL(target);
    url.hostname = '127.0.0.1';
    url.port = String((this.server.address() as AddressInfo).port);
    return url.toString();
  }

  cut(): void {
    this.refusing = true;
    for (const socket of this.sockets) socket.destroy();
  }

  resume(): void {
    this.refusing = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
