import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { waitFor } from '@pmatch/testkit';

/** The built CLI, run exactly as a developer runs it. */
const MAIN = path.resolve(__dirname, '../dist/main.js');

/**
 * `ops webhooks listen` as a process of its own, its stdout read line by line (one JSON object a
 * line). `started` resolves with its first line, printed once it forwards what is recorded from
 * then on; `stop` sends SIGINT, as Ctrl-C does, and resolves with its exit code and last line.
 */
export class ListenProcess {
  readonly lines: Record<string, unknown>[] = [];
  readonly stderr: string[] = [];
  private readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => this.lines.push(JSON.parse(line) as Record<string, unknown>));
    child.stderr!.on('data', (chunk: Buffer) => this.stderr.push(chunk.toString('utf8')));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  static start(args: readonly string[], env: Record<string, string>): ListenProcess {
    const child = spawn(process.execPath, [MAIN, 'webhooks', 'listen', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    return new ListenProcess(child);
  }

  /** Its first line, `{"object":"webhook_listener","secret":…}`. */
  async started(): Promise<{ secret: string; starting_after: string | null } & Record<string, unknown>> {
    const first = await waitFor(
      () => {
        if (this.child.exitCode !== null) throw new Error(`ops webhooks listen exited ${this.child.exitCode}: ${this.stderr.join('')}`);
        return this.lines[0];
      },
      { what: 'ops webhooks listen to start', timeoutMs: 30_000 },
    );
    return first as { secret: string; starting_after: string | null };
  }

  /** Its lines of one kind (`forwarded_event`, `poll_failed`). */
  linesOf(object: string): Record<string, unknown>[] {
    return this.lines.filter((line) => line.object === object);
  }

  async stop(): Promise<{ exitCode: number | null; last: Record<string, unknown> | undefined }> {
    if (this.child.exitCode === null) this.child.kill('SIGINT');
    const exitCode = await this.exited;
    return { exitCode, last: this.lines.at(-1) };
  }
}

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as it arrived. */
  body: string;
}

/** A developer's local server over plain http: it records every request and answers each path as told (204 unless told). */
export class LocalReceiver {
  readonly requests: ReceivedWebhook[] = [];
  private readonly statuses = new Map<string, number>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<LocalReceiver> {
    let receiver: LocalReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = req.url ?? '/';
        receiver!.requests.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(receiver!.statuses.get(path) ?? 204).end();
      });
    });
    receiver = new LocalReceiver(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  answer(path: string, status: number): void {
    this.statuses.set(path, status);
  }

  requestsTo(path: string): ReceivedWebhook[] {
    return this.requests.filter((r) => r.path === path);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
