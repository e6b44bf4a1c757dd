import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Clock, Logger } from '@pmatch/platform';
import { createTransport, type TransportOptions } from 'nodemailer';

export interface Mailer {
  send(message: { to: string; subject: string; text: string }): Promise<void>;
  close(): void;
}

/**
 * The longest one send may take before it is given up as failed (and retried later). nodemailer's
 * own deadlines are per step (connect 10 s, greeting 10 s, 30 s of silence), so a server that
 * answers slowly but never falls silent could otherwise hold a send for ever.
 */
export const MAIL_SEND_DEADLINE_MS = 60_000;

/** Plain-text mail over SMTP (SMTP_URL), with deadlines so a stuck mail server cannot stall the loop. */
export function createSmtpMailer(smtpUrl: string, from: string): Mailer {
  const transport = createTransport({
    url: smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  } as TransportOptions);
  return {
    async send(message) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the mail server took longer than ${MAIL_SEND_DEADLINE_MS / 1000} s`)), MAIL_SEND_DEADLINE_MS);
      });
      try {
        await Promise.race([transport.sendMail({ from, ...message }), deadline]);
      } finally {
        clearTimeout(timer);
      }
    },
    close() {
      transport.close();
    },
  };
}

/**
 * Development without SMTP_URL: each mail is written, as it would have been sent (RFC 5322, from
 * nodemailer's stream transport), to its own `.eml` file under `dir`, and a log line names the
 * file. The folder is made at start, so one that cannot be written stops the service there.
 */
export async function createFileMailer(options: { dir: string; from: string; clock: Clock; logger: Logger }): Promise<Mailer & { dir: string }> {
  const dir = resolve(options.dir);
  await mkdir(dir, { recursive: true });
  const transport = createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    dir,
    async send(message) {
      const now = options.clock.now();
      const { message: eml } = (await transport.sendMail({ from: options.from, date: now, ...message })) as { message: Buffer };
      // Sortable by time; the random part keeps two mails of one millisecond apart.
      const file = join(dir, `${now.toISOString().replace(/:/g, '-')}-${randomUUID().slice(0, 8)}.eml`);
      await writeFile(file, eml, { flag: 'wx' });
      options.logger.info({ file }, 'SMTP_URL is not set: e-mail written to a file');
    },
    close() {
      transport.close();
    },
  };
}
