import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP listener on loopback that keeps every message it is given. */
export class SmtpListener {
  readonly mails: ReceivedMail[] = [];
  /** Messages whose data arrived but whose acceptance waits for `release()`: a slow mail server. */
  readonly held: string[] = [];
  private holding = false;
  private readonly releases: (() => void)[] = [];

  private constructor(private readonly server: SMTPServer) {}

  static async start(port = 0): Promise<SmtpListener> {
    let listener: SmtpListener | undefined;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const mail = {
            from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          };
          const accept = () => {
            listener!.mails.push(mail);
            callback();
          };
          if (!listener!.holding) return accept();
          listener!.held.push(mail.raw);
          listener!.releases.push(accept);
        });
      },
    });
    listener = new SmtpListener(server);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return listener;
  }

  /** From now on, answers each message only when released. */
  hold(): void {
    this.holding = true;
  }

  /** Accepts every held message and stops holding. */
  release(): void {
    this.holding = false;
    for (const accept of this.releases.splice(0)) accept();
  }

  get port(): number {
    return (this.server.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
