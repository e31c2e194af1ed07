import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Config } from '../config.ts';
import type { MailCaps, MailKind, MailLogRepo } from '../repos/mailLog.ts';

export interface OutgoingMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  messageId: string;
  headers?: Record<string, string>;
}

export interface Mailer {
  readonly kind: 'smtp' | 'file';
  /** Returns where it went: the SMTP server's answer, or the .eml file path. */
  send(m: OutgoingMail): Promise<string>;
  close(): void;
}

// A stuck SMTP server must not hold a job for nodemailer's default ten minutes.
const SMTP_TIMEOUTS = { connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 30_000 };

/** SMTP_URL when set; otherwise each message is written as an .eml file under DATA_DIR/mail. */
export function createMailer(config: Pick<Config, 'smtpUrl' | 'dataDir'>): Mailer {
  if (config.smtpUrl) {
    const transport = nodemailer.createTransport({ url: config.smtpUrl, ...SMTP_TIMEOUTS });
    return {
      kind: 'smtp',
      async send(m) {
        const info = await transport.sendMail(toNodemailer(m));
        return String(info.response ?? info.messageId);
      },
      close: () => transport.close(),
    };
  }
  const dir = path.join(config.dataDir, 'mail');
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    kind: 'file',
    async send(m) {
      const info = await transport.sendMail(toNodemailer(m));
      // Alerts carry crash data: readable by the service's user only.
      await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
      const local = (m.messageId.replace(/^<|>$/g, '').split('@')[0] ?? '').replace(/[^A-Za-z0-9._-]/g, '');
      // The random part keeps apart the copies of one alert sent to several recipients in one millisecond.
      const base = `${new Date().toISOString().replace(/[:.]/g, '-')}-${local}-${randomBytes(4).toString('hex')}`;
      const file = path.join(dir, `${base}.eml`);
      // Written whole, then renamed: a reader of the directory never sees half a message.
      const tmp = path.join(dir, `.${base}.${process.pid}.tmp`);
      await fs.promises.writeFile(tmp, info.message as Buffer, { mode: 0o600 });
      await fs.promises.rename(tmp, file);
      return file;
    },
    close: () => transport.close(),
  };
}

function toNodemailer(m: OutgoingMail) {
  return {
    from: m.from,
    to: m.to,
    subject: m.subject,
    text: m.text,
    html: m.html,
    messageId: m.messageId,
    headers: { 'Auto-Submitted': 'auto-generated', ...m.headers },
  };
}

/**
 * Whether one more email of `kind` may go to `recipient` on behalf of `accountId` (null: no
 * account, e.g. ALERT_EMAIL_TO): the daily caps per address and per account (MAIL_ADDRESS_DAILY_MAX,
 * MAIL_ACCOUNT_DAILY_MAX). A yes is a reservation: every sender asks once per recipient, just
 * before sending.
 */
export type MailGate = (kind: MailKind, recipient: string, accountId: string | null) => Promise<boolean>;

export function mailGate(log: MailLogRepo, caps: MailCaps): MailGate {
  let prunedAt = 0;
  return async (kind, recipient, accountId) => {
    if (Date.now() - prunedAt > 3_600_000) {
      prunedAt = Date.now();
      await log.prune();
    }
    return log.reserve(kind, recipient, accountId, caps);
  };
}
