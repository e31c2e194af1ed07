import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  raw: string;
  /** Headers (unfolded, lower-case names) and the body with quoted-printable undone. */
  headers: Record<string, string>;
  body: string;
  rcptTo: string[];
  mailFrom: string;
}

/** Undoes quoted-printable soft breaks and escapes, enough to search a body for text. */
export function decodeQuotedPrintable(s: string): string {
  const bytes = Buffer.from(s.replace(/=\r?\n/g, ''), 'latin1')
    .toString('latin1')
    .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

export function parseMail(raw: string): { headers: Record<string, string>; body: string } {
  const norm = raw.replace(/\r\n/g, '\n');
  const cut = norm.indexOf('\n\n');
  const head = norm.slice(0, cut).replace(/\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of head.split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { headers, body: decodeQuotedPrintable(norm.slice(cut + 2)) };
}

export interface TestSmtp {
  url: string;
  mails: ReceivedMail[];
  /** While set, every message is refused with this temporary error. */
  refuse: string | null;
  close(): Promise<void>;
}

/** Every mail any test SMTP server of this process received (a test server's worker may mail first). */
const received: ReceivedMail[] = [];
export const everyReceivedMail = (): readonly ReceivedMail[] => received;

/** A real SMTP server on a free port that keeps what it receives. */
export async function startSmtpServer(): Promise<TestSmtp> {
  const state: TestSmtp = { url: '', mails: [], refuse: null, close: async () => {} };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (state.refuse) {
          const err = Object.assign(new Error(state.refuse), { responseCode: 451 });
          return cb(err);
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        const mail = {
          raw,
          ...parseMail(raw),
          rcptTo: session.envelope.rcptTo.map((a) => a.address),
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        };
        state.mails.push(mail);
        received.push(mail);
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  state.url = `smtp://127.0.0.1:${port}`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}
