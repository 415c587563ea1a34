/**
 * Local receivers for notification tests: an HTTP endpoint that verifies the
 * signed webhook as a receiver should [D3] (its own URL, the raw body, constant
 * time, a nonce accepted once), and an SMTP server (smtp-server) that keeps each
 * mail it is given.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { requestSignature } from '../../src/api/signing.js';

export interface HttpDelivery {
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON from the wire
  /** The D3 signature checked with the secret, over this receiver's own URL; null when no secret was given. */
  signatureValid: boolean | null;
  /** The nonce was seen before (a replay). */
  replayed: boolean;
}

/** How the receiver answers its nth request (0-based): a status, or `hang` (never answers). */
export type Answer = (n: number) => number | 'hang';

export interface HttpReceiver {
  url: string;
  deliveries: HttpDelivery[];
  /** Requests received, answered or not. */
  requests: number;
  stop(): Promise<void>;
}

function verify(secret: string, url: string, headers: HttpDelivery['headers'], raw: Buffer): boolean {
  const nonce = headers['authorization-nonce'];
  const signature = headers['authorization-signature'];
  if (typeof nonce !== 'string' || typeof signature !== 'string') return false;
  const expected = Buffer.from(requestSignature(secret, nonce, 'POST', url, raw), 'hex');
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export async function startHttpReceiver(options: { secret?: string; answer?: Answer; path?: string } = {}): Promise<HttpReceiver> {
  const answer = options.answer ?? (() => 200);
  const nonces = new Set<string>();
  const hanging: ServerResponse[] = [];
  let url = '';
  const receiver: HttpReceiver = { url, deliveries: [], requests: 0, stop: async () => {} };
  const server = createServer((req, res) => {
    const n = receiver.requests;
    receiver.requests += 1;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const nonce = String(req.headers['authorization-nonce']);
      const replayed = nonces.has(nonce);
      nonces.add(nonce);
      const how = answer(n);
      if (how === 'hang') {
        hanging.push(res);
        return;
      }
      receiver.deliveries.push({
        headers: req.headers, raw: raw.toString('utf8'), body: JSON.parse(raw.toString('utf8')), replayed,
        signatureValid: options.secret === undefined ? null : verify(options.secret, url, req.headers, raw),
      });
      res.writeHead(how).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${options.path ?? '/paybatch/notifications'}`;
  receiver.url = url;
  receiver.stop = () => new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  return receiver;
}

/** An address nothing listens on: a receiver that is down. */
export async function downUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/down`;
}

export interface Mail {
  from: string;
  to: string[];
  raw: string;
  /** A header's value, unfolded. */
  header(name: string): string | undefined;
  /** The body, quoted-printable decoded. */
  text: string;
}

export interface SmtpReceiver {
  port: number;
  mails: Mail[];
  /** user:password pairs the server accepted. */
  logins: string[];
  stop(): Promise<void>;
}

function decodeQuotedPrintable(body: string): string {
  const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => `%${hex}`);
  try {
    return decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/g, '%25'));
  } catch {
    return bytes;
  }
}

function parseMail(raw: string, from: string, to: string[]): Mail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const headers = new Map(head.split('\r\n').map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  const qp = /quoted-printable/i.test(headers.get('content-transfer-encoding') ?? '');
  return { from, to, raw, header: (name) => headers.get(name.toLowerCase()), text: qp ? decodeQuotedPrintable(body) : body };
}

/** A local SMTP server, plain (no STARTTLS), with a login when `user` is given. */
export async function startSmtpReceiver(login?: { user: string; password: string }): Promise<SmtpReceiver> {
  const receiver: SmtpReceiver = { port: 0, mails: [], logins: [], stop: async () => {} };
  const server = new SMTPServer({
    disabledCommands: login ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    allowInsecureAuth: true,
    authOptional: !login,
    logger: false,
    disableReverseLookup: true,
    onAuth(auth, _session, callback) {
      if (login && auth.username === login.user && auth.password === login.password) {
        receiver.logins.push(`${auth.username}:${auth.password}`);
        callback(null, { user: auth.username });
      } else {
        callback(new Error('Invalid username or password'));
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        receiver.mails.push(parseMail(Buffer.concat(chunks).toString('utf8'), from, session.envelope.rcptTo.map((r) => r.address)));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.port = (server.server.address() as AddressInfo).port;
  receiver.stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}

/** Waits for a condition, looking every few milliseconds: for events, not for time. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
