// How a message leaves: SMTP (plain with opportunistic STARTTLS, implicit TLS, or STARTTLS
// required) or a sendmail program, through nodemailer, as [mailer] says. The password reaches
// nodemailer only; nothing here logs the settings.
import type { Transporter } from 'nodemailer';
import type { MailerConfig } from '../config/config.js';

/** One message as the queue stores it. */
export interface OutgoingMail {
  to: string;
  subject: string;
  headers: Record<string, string>;
  text: string;
  html: string;
}

export interface MailSender {
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/** Seconds an SMTP conversation may take. */
const SMTP_TIMEOUT_MS = 30_000;

/** nodemailer is loaded with the first message, not at start-up (most sites send little mail). */
async function createTransport(cfg: MailerConfig): Promise<Transporter> {
  const { default: nodemailer } = await import('nodemailer');
  return cfg.protocol === 'sendmail'
    ? nodemailer.createTransport({ sendmail: true, path: cfg.sendmailPath, newline: 'unix' })
    : nodemailer.createTransport({
        host: cfg.smtpAddr,
        port: cfg.smtpPort,
        secure: cfg.protocol === 'smtps',
        requireTLS: cfg.protocol === 'smtp+starttls',
        ignoreTLS: false,
        ...(cfg.user ? { auth: { user: cfg.user, pass: cfg.passwd } } : {}),
        tls: { rejectUnauthorized: !cfg.forceTrustServerCert },
        connectionTimeout: SMTP_TIMEOUT_MS,
        greetingTimeout: SMTP_TIMEOUT_MS,
        socketTimeout: SMTP_TIMEOUT_MS,
        logger: false,
        debug: false,
      });
}

export function createSender(cfg: MailerConfig): MailSender {
  let transport: Promise<Transporter> | undefined;
  return {
    async send(mail) {
      await (
        await (transport ??= createTransport(cfg))
      ).sendMail({
        from: cfg.from,
        to: mail.to,
        subject: cfg.subjectPrefix ? `${cfg.subjectPrefix}${mail.subject}` : mail.subject,
        text: mail.text,
        html: mail.html,
        // Message-ID is ours (threads), not nodemailer's.
        ...(mail.headers['Message-ID'] ? { messageId: mail.headers['Message-ID'] } : {}),
        headers: Object.fromEntries(Object.entries(mail.headers).filter(([k]) => k !== 'Message-ID')),
      });
    },
    close() {
      void transport?.then((t) => t.close()).catch(() => undefined);
    },
  };
}
