import nodemailer from 'nodemailer';

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
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  } as nodemailer.TransportOptions);
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
