/**
 * The client's lowest layer (src/api/exchange.ts, and how client.ts reads what
 * it gathers) against a service that lies at the wire: a raw TCP double
 * (node:net, not node:http) that sends lengths it does not keep, chunks it
 * cuts or mangles, answers too long, answers that never finish or trickle in,
 * resets, interim answers, duplicate lengths, empty and bodiless answers.
 *
 * For every case: a write (create, fund) whose answer is not whole and true is
 * OutcomeUnknown and is sent once, never repeated; a read is Retryable; nothing
 * outlasts the timeout; the exchange's timer is cleared or fired, never left
 * behind; a connection ended from our side is freed; and the same client serves
 * the next call.
 */
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/api/client.js';
import { OutcomeUnknown, Rejected, Retryable } from '../../src/api/errors.js';
import { exchange } from '../../src/api/exchange.js';
import type { PayoutRequest } from '../../src/api/payout-request.js';
import { createBody } from '../helpers/requests.js';

/** The whole exchange's bound; a number no other timer here uses, so that the exchange's own timers can be told apart. */
const TIMEOUT = 333;
/** Late, but not hanging: the timer's own lateness and a loaded 2-core machine (the whole suite runs beside). */
const SLACK = 1500;
const CAP = 1024;
const ATTEMPTS = 2;

const TX = {
  id: 'tr_1', external_id: 'E-1', state: 'approved', may_cancel: true, updated_at: '2026-01-01T00:00:00Z',
  input_amount_in_cents: '100000', input_currency: 'USD', output_amount_in_cents: '79120', output_currency: 'GBP',
};
const txText = (extra: Record<string, unknown> = {}): string => JSON.stringify({ ...TX, ...extra });

// ---- the exchange's timers: every one made is cleared or fires (once), none is left behind

const timers = { made: 0, cleared: 0, fired: 0, live: new Set<unknown>() };
const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;
function trackTimers(): void {
  const tracked = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    if (ms !== TIMEOUT) return realSetTimeout(callback, ms, ...args);
    timers.made += 1;
    const timer = realSetTimeout(() => {
      timers.live.delete(timer);
      timers.fired += 1;
      callback(...args);
    }, ms);
    timers.live.add(timer);
    return timer;
  }) as unknown as typeof setTimeout;
  globalThis.setTimeout = tracked;
  globalThis.clearTimeout = ((timer: Parameters<typeof clearTimeout>[0]) => {
    if (timers.live.delete(timer)) timers.cleared += 1;
    realClearTimeout(timer);
  }) as typeof clearTimeout;
}

// ---- the wire double

interface Seen {
  method: string;
  path: string;
  socket: Socket;
}
type Act = (socket: Socket, seen: Seen) => void;

type Header = [string, string | number];
const head = (status: string, headers: Header[]): string => `HTTP/1.1 ${status}\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
const json: Header = ['Content-Type', 'application/json'];
const length = (body: string | Buffer): Header => ['Content-Length', Buffer.byteLength(body)];

/** The honest service: one transaction, created (201), funded (pending) or read (200), with its length. */
const honest: Act = (socket, seen) => {
  const fund = seen.path.endsWith('/fund');
  const body = txText(fund ? { state: 'pending' } : {});
  socket.write(head(seen.method === 'POST' && !fund ? '201 Created' : '200 OK', [json, length(body)]) + body);
};

/** `body` as chunks of the given sizes, then the last chunk: a whole chunked answer. */
function chunked(body: string, sizes: number[]): string {
  let out = '';
  let at = 0;
  for (const size of sizes) {
    out += `${size.toString(16)}\r\n${body.slice(at, at + size)}\r\n`;
    at += size;
  }
  if (at < body.length) out += `${(body.length - at).toString(16)}\r\n${body.slice(at)}\r\n`;
  return `${out}0\r\n\r\n`;
}

class Wire {
  readonly seen: Seen[] = [];
  /** Sockets a hostile act was played on. */
  readonly played = new Set<Socket>();
  readonly open = new Set<Socket>();
  act: Act = honest;
  url = '';
  private readonly server = createServer((socket) => this.connection(socket));

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    for (const socket of this.open) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** Acts `hostile` on every request until `honest` is set again. */
  play(hostile: Act): void {
    this.act = (socket, seen) => {
      this.played.add(socket);
      hostile(socket, seen);
    };
  }

  count(method: string, pathEnd: string): number {
    return this.seen.filter((s) => s.method === method && s.path.endsWith(pathEnd)).length;
  }

  private connection(socket: Socket): void {
    this.open.add(socket);
    socket.on('close', () => this.open.delete(socket));
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    socket.on('data', (data: Buffer) => {
      buffered = Buffer.concat([buffered, data]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const text = buffered.subarray(0, end).toString('latin1');
        const bodyLength = Number(/\r\ncontent-length:\s*(\d+)/i.exec(text)?.[1] ?? 0);
        if (buffered.length < end + 4 + bodyLength) return;
        buffered = buffered.subarray(end + 4 + bodyLength);
        const [method = '', path = ''] = text.split(' ');
        const seen = { method, path, socket };
        this.seen.push(seen);
        this.act(socket, seen);
        if (socket.destroyed) return;
      }
    });
  }
}

/** Sends `text` one byte every `everyMs` until done or the socket closes. */
function drip(socket: Socket, text: string, everyMs: number): void {
  let at = 0;
  const timer = setInterval(() => {
    if (at >= text.length || socket.destroyed) return clearInterval(timer);
    socket.write(text[at] as string);
    at += 1;
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
}

/** Runs `then` after `ms` unless the socket closed first. */
function later(socket: Socket, ms: number, then: () => void): void {
  const timer = realSetTimeout(() => {
    if (!socket.destroyed) then();
  }, ms);
  socket.on('close', () => realClearTimeout(timer));
}

async function eventually(check: () => boolean, withinMs = 2000): Promise<boolean> {
  const until = performance.now() + withinMs;
  while (!check()) {
    if (performance.now() > until) return false;
    await new Promise((resolve) => realSetTimeout(resolve, 5));
  }
  return true;
}

const outcome = async <T>(call: Promise<T>): Promise<{ value: T | Error; ms: number }> => {
  const started = performance.now();
  const value = await call.catch((error: unknown) => error as Error);
  return { value, ms: performance.now() - started };
};

const request = (): PayoutRequest => createBody('gbr') as unknown as PayoutRequest;
const GUARD = { input_amount_in_cents: '100000', input_currency: 'USD' };

describe('the exchange against a service that lies at the wire', () => {
  const wire = new Wire();
  let client: PayoutClient;

  beforeAll(async () => {
    trackTimers();
    await wire.start();
  });
  afterAll(async () => {
    globalThis.setTimeout = realSetTimeout;
    globalThis.clearTimeout = realClearTimeout;
    await wire.stop();
  });
  beforeEach(() => {
    timers.made = 0;
    timers.cleared = 0;
    timers.fired = 0;
    wire.act = honest;
    wire.seen.length = 0;
    wire.played.clear();
    client = new PayoutClient({
      baseUrl: wire.url, credentials: { apiKey: 'k', apiSecret: 's3cret-s3cret' }, timeoutMs: TIMEOUT,
      retry: { baseMs: 1, capMs: 1, attempts: ATTEMPTS }, maxAnswerBytes: CAP, random: () => 0.5, sleep: async () => {},
    });
  });
  afterEach(async () => {
    // Nothing in flight is left: the client closes at once, every exchange timer is gone, every connection with it.
    const closing = client.close().then(() => 'closed');
    // Bounded: a close that hangs fails the test at the bound, and the bound's timer is cleared once it closes.
    let bound: ReturnType<typeof realSetTimeout> | undefined;
    const hung = new Promise<string>((_resolve, reject) => {
      bound = realSetTimeout(() => reject(new Error('the client did not close within 3 s')), 3000);
    });
    try {
      expect(await Promise.race([closing, hung])).toBe('closed');
    } finally {
      clearTimeout(bound);
    }
    expect(timers.live.size).toBe(0);
    expect(timers.made).toBe(timers.cleared + timers.fired);
    expect(await eventually(() => wire.open.size === 0)).toBe(true);
  });

  /** The same client, the honest service again: a read and a create both come back whole. */
  async function poolStillWorks(): Promise<void> {
    wire.act = honest;
    expect(await client.getTransaction('tr_1')).toMatchObject({ id: 'tr_1', state: 'approved' });
    expect(await client.createTransaction(request())).toMatchObject({ id: 'tr_1', input_amount_in_cents: '100000' });
  }

  /**
   * Plays `hostile` to a create, a fund and a read. Each write is OutcomeUnknown (its message matching `why`),
   * sent once and never again; the read is Retryable after its attempts (`reads`: an answer read whole but not a
   * transaction is Retryable from the endpoint, past the retry loop, so it is asked once); none outlasts the timeout.
   */
  async function unknownOnceEach(hostile: Act, why: RegExp, options: { freed?: boolean; reads?: number } = {}): Promise<void> {
    wire.play(hostile);
    const create = await outcome(client.createTransaction(request()));
    expect(create.value).toBeInstanceOf(OutcomeUnknown);
    expect((create.value as Error).message).toMatch(why);
    expect(create.ms).toBeLessThan(TIMEOUT + SLACK);
    expect(wire.count('POST', '/transactions')).toBe(1);

    const fund = await outcome(client.fundTransaction('tr_1', GUARD));
    expect(fund.value).toBeInstanceOf(OutcomeUnknown);
    expect((fund.value as Error).message).toMatch(why);
    expect(fund.ms).toBeLessThan(TIMEOUT + SLACK);
    expect(wire.count('POST', '/fund')).toBe(1);

    const read = await outcome(client.getTransaction('tr_1'));
    expect(read.value).toBeInstanceOf(Retryable);
    expect(read.ms).toBeLessThan(ATTEMPTS * TIMEOUT + SLACK);
    expect(wire.count('GET', '/transactions/tr_1')).toBe(options.reads ?? ATTEMPTS);

    // A connection ended from our side (cut off, too long, timed out) is closed, not kept in the pool.
    if (options.freed) expect(await eventually(() => [...wire.played].every((s) => s.destroyed))).toBe(true);
    await poolStillWorks();
  }

  /** A refusal whose reasons cannot be read: each write OutcomeUnknown and sent once, a read Rejected (a read changes nothing). */
  async function refusalUnread(hostile: Act): Promise<void> {
    wire.play(hostile);
    const outcomes: string[] = [];
    client.observeCalls((_endpoint, outcome) => outcomes.push(outcome));
    const create = await outcome(client.createTransaction(request()));
    expect(create.value).toBeInstanceOf(OutcomeUnknown);
    expect((create.value as Error).message).toMatch(/the 422 refusal could not be read/);
    expect(wire.count('POST', '/transactions')).toBe(1);
    const fund = await outcome(client.fundTransaction('tr_1', GUARD));
    expect(fund.value).toBeInstanceOf(OutcomeUnknown);
    expect(wire.count('POST', '/fund')).toBe(1);
    const read = await outcome(client.getTransaction('tr_1'));
    expect(read.value).toBeInstanceOf(Rejected);
    expect((read.value as Rejected).errors).toEqual([]);
    // Counted as unreadable, not as a refusal the service explained (/metrics).
    expect(outcomes).toEqual(['unreadable', 'unreadable', 'unreadable']);
    await poolStillWorks();
  }

  it('the honest double: a create, a fund and a read come back whole (the double itself is sound)', async () => {
    expect(await client.createTransaction(request())).toMatchObject({ id: 'tr_1', state: 'approved' });
    expect(await client.fundTransaction('tr_1', GUARD)).toMatchObject({ state: 'pending' });
    expect(await client.getTransaction('tr_1')).toMatchObject({ state: 'approved' });
    expect(wire.seen.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /v1/transactions', 'POST /v1/transactions/tr_1/fund', 'GET /v1/transactions/tr_1']);
  });

  describe('lengths not kept', () => {
    it('Content-Length larger than the bytes sent, then the connection closed (FIN): unreadable', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.end(head('201 Created', [json, ['Content-Length', body.length + 40]]) + body);
      }, /could not be read/, { freed: true });
    });

    it('the same, the answer saying Connection: close (undici reads it to the end of the connection)', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.end(head('201 Created', [json, ['Content-Length', body.length + 40], ['Connection', 'close']]) + body);
      }, /could not be read/, { freed: true });
    });

    it('the same, cut by a reset (RST) instead', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.write(head('201 Created', [json, ['Content-Length', body.length + 40]]) + body);
        later(socket, 20, () => socket.resetAndDestroy());
      }, /could not be read/, { freed: true });
    });

    it('Content-Length smaller than the body (the last byte left out, the rest sent after it): unreadable', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.write(head('201 Created', [json, ['Content-Length', body.length - 1]]) + body);
      }, /could not be read/);
    });

    it('Content-Length smaller than the body, the rest a whole second answer naming another transaction: the next call is not answered by it', async () => {
      const smuggled = txText({ id: 'tr_evil', state: 'paid' });
      wire.play((socket) => {
        const body = txText();
        socket.write(head('201 Created', [json, ['Content-Length', body.length - 1]]) + body + head('200 OK', [json, length(smuggled)]) + smuggled);
      });
      const create = await outcome(client.createTransaction(request()));
      expect(create.value).toBeInstanceOf(OutcomeUnknown);
      expect(wire.count('POST', '/transactions')).toBe(1);
      wire.act = honest;
      expect(await client.getTransaction('tr_1')).toMatchObject({ id: 'tr_1', state: 'approved' });
      await poolStillWorks();
    });

    it('duplicate Content-Length headers with different values: no answer, the connection dropped', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.write(head('201 Created', [json, ['Content-Length', body.length], ['Content-Length', body.length + 10]]) + body);
      }, /no answer/, { freed: true });
    });

    it('duplicate Content-Length headers with the same value: no answer either (undici is strict)', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.write(head('201 Created', [json, length(body), length(body)]) + body);
      }, /no answer/, { freed: true });
    });

    it('one Content-Length header listing two values ("5, 400"): no answer', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.write(head('201 Created', [json, ['Content-Length', `${body.length}, ${body.length + 10}`]]) + body);
      }, /no answer/, { freed: true });
    });

    it('Content-Length and Transfer-Encoding: chunked together: no answer', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.write(head('201 Created', [json, length(body), ['Transfer-Encoding', 'chunked']]) + chunked(body, [10]));
      }, /no answer/, { freed: true });
    });

    it('no length at all, Connection: close, the body cut short by a reset: unreadable', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.write(head('201 Created', [json, ['Connection', 'close']]) + body.slice(0, -10));
        later(socket, 20, () => socket.resetAndDestroy());
      }, /could not be read/, { freed: true });
    });

    it('no length at all, Connection: close, the body cut short by a close (FIN): unreadable (a cut JSON object never parses)', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.end(head('201 Created', [json, ['Connection', 'close']]) + body.slice(0, -10));
      }, /could not be read/, { freed: true });
    });

    it('no length at all, Connection: close, the body whole then a close: read whole (an answer ended by its connection)', async () => {
      wire.play((socket) => socket.end(head('201 Created', [json, ['Connection', 'close']]) + txText()));
      expect(await client.createTransaction(request())).toMatchObject({ id: 'tr_1', state: 'approved' });
      await poolStillWorks();
    });
  });

  describe('chunks cut or mangled', () => {
    it('chunked, the connection closed mid-chunk: unreadable', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.end(`${head('201 Created', [json, ['Transfer-Encoding', 'chunked']])}${(body.length).toString(16)}\r\n${body.slice(0, 30)}`);
      }, /could not be read/, { freed: true });
    });

    it('chunked, Connection: close, cut mid-chunk: unreadable', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.end(`${head('201 Created', [json, ['Transfer-Encoding', 'chunked'], ['Connection', 'close']])}${(body.length).toString(16)}\r\n${body.slice(0, 30)}`);
      }, /could not be read/, { freed: true });
    });

    it('chunked, every chunk whole but the last (0) chunk never sent, the connection closed: unreadable', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.end(head('201 Created', [json, ['Transfer-Encoding', 'chunked']]) + chunked(body, [40]).slice(0, -'0\r\n\r\n'.length));
      }, /could not be read/, { freed: true });
    });

    it('chunked, reset mid-chunk: unreadable', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.write(`${head('201 Created', [json, ['Transfer-Encoding', 'chunked']])}${(body.length).toString(16)}\r\n${body.slice(0, 30)}`);
        later(socket, 20, () => socket.resetAndDestroy());
      }, /could not be read/, { freed: true });
    });

    it('a malformed chunk size ("zz"): unreadable, the connection dropped', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.write(`${head('201 Created', [json, ['Transfer-Encoding', 'chunked']])}a\r\n${body.slice(0, 10)}\r\nzz\r\n${body.slice(10)}\r\n0\r\n\r\n`);
      }, /could not be read/, { freed: true });
    });

    it('a chunk size that overflows (17 hex digits): unreadable', async () => {
      await unknownOnceEach((socket) => {
        socket.write(`${head('201 Created', [json, ['Transfer-Encoding', 'chunked']])}fffffffffffffffff\r\n${txText()}\r\n0\r\n\r\n`);
      }, /could not be read/, { freed: true });
    });

    it('a chunk longer than its size says (data where its CRLF should be): unreadable', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.write(`${head('201 Created', [json, ['Transfer-Encoding', 'chunked']])}10\r\n${body}\r\n0\r\n\r\n`);
      }, /could not be read/, { freed: true });
    });

    it('a whole chunked answer in one-byte chunks with extensions and trailers: read whole', async () => {
      const body = txText();
      wire.play((socket) => {
        let out = head('201 Created', [json, ['Transfer-Encoding', 'chunked'], ['Trailer', 'X-Check']]);
        for (const char of body) out += `1;ext=x\r\n${char}\r\n`;
        socket.write(`${out}0\r\nX-Check: 1\r\n\r\n`);
      });
      expect(await client.createTransaction(request())).toMatchObject({ id: 'tr_1', state: 'approved' });
      await poolStillWorks();
    });
  });

  describe('answers over the size cap', () => {
    /** A transaction answer exactly `size` bytes long. */
    const sized = (size: number): string => {
      const bare = txText({ pad: '' });
      return txText({ pad: 'x'.repeat(size - bare.length) });
    };

    it('Content-Length one over the cap: not read (cut at its headers), unreadable', async () => {
      await unknownOnceEach((socket) => {
        const body = sized(CAP + 1);
        socket.write(head('201 Created', [json, length(body)]) + body);
      }, /could not be read/, { freed: true });
    });

    it('Content-Length over the cap, the body never sent: cut at the headers, not waited for', async () => {
      await unknownOnceEach((socket) => {
        socket.write(head('201 Created', [json, ['Content-Length', 10 * 1024 * 1024]]));
      }, /could not be read/, { freed: true });
      // Not a timeout: cut as soon as the headers said how long.
      expect(timers.fired).toBe(0);
    });

    it('chunked, one byte over the cap in all: unreadable', async () => {
      await unknownOnceEach((socket) => {
        socket.write(head('201 Created', [json, ['Transfer-Encoding', 'chunked']]) + chunked(sized(CAP + 1), [100, 400, 500]));
      }, /could not be read/, { freed: true });
    });

    it('chunked, over the cap and never ending (a chunk every few ms): cut as soon as it passes the cap', async () => {
      await unknownOnceEach((socket) => {
        socket.write(head('201 Created', [json, ['Transfer-Encoding', 'chunked']]));
        const timer = setInterval(() => socket.write(`100\r\n${'x'.repeat(256)}\r\n`), 2);
        socket.on('close', () => clearInterval(timer));
      }, /could not be read/, { freed: true });
      expect(timers.fired).toBe(0);
    });

    it('no length, Connection: close, over the cap: unreadable', async () => {
      await unknownOnceEach((socket) => {
        socket.end(head('201 Created', [json, ['Connection', 'close']]) + sized(CAP + 1));
      }, /could not be read/, { freed: true });
    });

    it('exactly at the cap, by Content-Length and chunked: read whole', async () => {
      const body = sized(CAP);
      expect(Buffer.byteLength(body)).toBe(CAP);
      wire.play((socket) => socket.write(head('201 Created', [json, length(body)]) + body));
      expect(await client.createTransaction(request())).toMatchObject({ id: 'tr_1' });
      wire.play((socket) => socket.write(head('201 Created', [json, ['Transfer-Encoding', 'chunked']]) + chunked(body, [1, 511, 511])));
      expect(await client.createTransaction(request())).toMatchObject({ id: 'tr_1' });
      await poolStillWorks();
    });

    it('a refusal (422) over the cap: a write is OutcomeUnknown (which refusal is lost), sent once; a read Rejected', async () => {
      // The status line came whole and says refused, but its reasons are lost, and with them [D6]'s duplicate signal
      // (external_id, meta.existing): the create is found out by looking its external_id up [D7], not ended as refused.
      await refusalUnread((socket) => {
        const body = JSON.stringify({ errors: { external_id: ['has already been taken'] }, pad: 'x'.repeat(CAP) });
        socket.write(head('422 Unprocessable Entity', [json, length(body)]) + body);
      });
    });
  });

  describe('answers that never finish', () => {
    it('headers that never finish: the timeout fires, once, the call ends and the connection is freed', async () => {
      await unknownOnceEach((socket) => {
        socket.write('HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nX-Half: ');
      }, new RegExp(`no answer \\(no answer within ${TIMEOUT} ms\\)`), { freed: true });
      // create, fund, and the read's two attempts: one timer each, each fired once (none cleared twice, none left).
      expect(timers.fired).toBe(2 + ATTEMPTS);
    });

    it('no byte at all after the request: the timeout ends it, the connection freed', async () => {
      await unknownOnceEach(() => {}, /no answer within/, { freed: true });
    });

    it('a whole, honest answer sent one byte every 4 ms (it would take over a second): ended at the timeout, unreadable or no answer', async () => {
      const started = timers.fired;
      await unknownOnceEach((socket, seen) => {
        const body = txText({ state: seen.path.endsWith('/fund') ? 'pending' : 'approved' });
        drip(socket, head('201 Created', [json, length(body)]) + body, 4);
      }, /could not be read|no answer within/, { freed: true });
      expect(timers.fired - started).toBe(2 + ATTEMPTS);
    });

    it('headers whole, then the body trickling a byte every 4 ms: unreadable at the timeout (the whole exchange is bounded)', async () => {
      await unknownOnceEach((socket) => {
        const body = txText();
        socket.write(head('201 Created', [json, length(body)]));
        drip(socket, body, 4);
      }, /could not be read/, { freed: true });
    });

    it('a HEAD-like answer (Content-Length given, no body, connection kept): unreadable at the timeout', async () => {
      await unknownOnceEach((socket) => {
        socket.write(head('201 Created', [json, ['Content-Length', 300]]));
      }, /could not be read/, { freed: true });
    });

    it('a HEAD-like answer then a close: unreadable at once', async () => {
      await unknownOnceEach((socket) => {
        socket.end(head('201 Created', [json, ['Content-Length', 300]]));
      }, /could not be read/, { freed: true });
      expect(timers.fired).toBe(0);
    });

    it('17 writes at once (one more than the connections), none answered: all OutcomeUnknown by the timeout, no more than 17 sent, the pool serves again', async () => {
      wire.play(() => {});
      const started = performance.now();
      const all = await Promise.all(Array.from({ length: 17 }, () => client.createTransaction(request()).catch((e: unknown) => e)));
      expect(performance.now() - started).toBeLessThan(TIMEOUT + SLACK);
      for (const one of all) expect(one).toBeInstanceOf(OutcomeUnknown);
      expect(await eventually(() => [...wire.played].every((s) => s.destroyed))).toBe(true);
      // 16 went out at once; the 17th waited for a connection. Its deadline is, within a few ms, the others': a connection
      // they free as their timers run may carry it out just before its own timer runs (seen: sent 0.5 ms before). Either
      // way it is OutcomeUnknown, which is true. (That a write whose time is up while it waits is never sent: below.)
      // Counted once the count holds still: a 17th that went out just before its timer may still be on its way here
      // (seen under load: counted 16, then it arrived, and the pool's next call made 18).
      let sent = wire.count('POST', '/transactions');
      for (let looks = 0; looks < 40; looks++) {
        await new Promise((resolve) => realSetTimeout(resolve, 25));
        const now = wire.count('POST', '/transactions');
        if (now === sent && looks >= 3) break;
        sent = now;
      }
      expect(sent).toBeGreaterThanOrEqual(16);
      expect(sent).toBeLessThanOrEqual(17);
      await poolStillWorks();
      expect(wire.count('POST', '/transactions')).toBe(sent + 1);
    });
  });

  describe('resets and closes', () => {
    it('a reset right after the request, before any byte: no answer', async () => {
      await unknownOnceEach((socket) => socket.resetAndDestroy(), /no answer/);
      expect(timers.fired).toBe(0);
    });

    it('a close (FIN) right after the request, before any byte: no answer', async () => {
      await unknownOnceEach((socket) => socket.end(), /no answer/);
      expect(timers.fired).toBe(0);
    });

    it('a reset after the headers, before any body byte: unreadable', async () => {
      await unknownOnceEach((socket) => {
        socket.write(head('201 Created', [json, ['Content-Length', 200]]));
        later(socket, 20, () => socket.resetAndDestroy());
      }, /could not be read/);
      expect(timers.fired).toBe(0);
    });

    it('socket.destroy() after the headers, before any body byte: unreadable', async () => {
      await unknownOnceEach((socket) => {
        socket.write(head('200 OK', [json, ['Transfer-Encoding', 'chunked']]));
        later(socket, 20, () => socket.destroy());
      }, /could not be read/);
    });

    it('a refusal (422) whose body is cut by a reset: a write is OutcomeUnknown, never repeated (the status came whole, its reasons did not)', async () => {
      await refusalUnread((socket) => {
        const body = JSON.stringify({ errors: { external_id: ['has already been taken'] } });
        socket.write(head('422 Unprocessable Entity', [json, length(body)]) + body.slice(0, 12));
        later(socket, 20, () => socket.resetAndDestroy());
      });
    });

    it('a 500 whose body is cut: OutcomeUnknown for a write, never repeated', async () => {
      await unknownOnceEach((socket) => {
        socket.end(head('500 Internal Server Error', [json, ['Content-Length', 100]]) + '{"err');
      }, /answered 500/);
    });
  });

  describe('interim answers and other oddities', () => {
    it('103 Early Hints (and 102 Processing) before the real answer: the real answer is read', async () => {
      wire.play((socket, seen) => {
        const fund = seen.path.endsWith('/fund');
        const body = txText(fund ? { state: 'pending' } : {});
        socket.write(head('102 Processing', []) + head('103 Early Hints', [['Link', '</x>; rel=preload'], ['Content-Length', 999999]]) + head(seen.method === 'POST' && !fund ? '201 Created' : '200 OK', [json, length(body)]) + body);
      });
      expect(await client.createTransaction(request())).toMatchObject({ id: 'tr_1', state: 'approved' });
      expect(await client.fundTransaction('tr_1', GUARD)).toMatchObject({ state: 'pending' });
      expect(await client.getTransaction('tr_1')).toMatchObject({ state: 'approved' });
      await poolStillWorks();
    });

    it('100 Continue (not asked for) before the real answer: undici drops the connection ("bad response"), so a write is OutcomeUnknown, sent once', async () => {
      // exchange.ts's comment expects a 100 to be followed by the real answer; undici 7 never lets it get there.
      await unknownOnceEach((socket, seen) => {
        const body = txText();
        socket.write(head('100 Continue', []) + head(seen.method === 'POST' ? '201 Created' : '200 OK', [json, length(body)]) + body);
      }, /no answer \(bad response\)/, { freed: true });
    });

    it('101 Switching Protocols (not asked for): no answer', async () => {
      await unknownOnceEach((socket) => {
        socket.write(head('101 Switching Protocols', [['Upgrade', 'websocket'], ['Connection', 'Upgrade']]) + txText());
      }, /no answer/, { freed: true });
    });

    it('a 1xx, then the connection closed: no answer', async () => {
      await unknownOnceEach((socket) => {
        socket.end(head('102 Processing', []));
      }, /no answer/, { freed: true });
    });

    it('a 2xx with an empty body (Content-Length: 0), and a 204: a write is OutcomeUnknown ("not a transaction"), a read Retryable', async () => {
      await unknownOnceEach((socket) => socket.write(head('201 Created', [json, ['Content-Length', 0]])), /not a transaction/, { reads: 1 });
      wire.seen.length = 0;
      await unknownOnceEach((socket) => socket.write(head('204 No Content', [json])), /not a transaction/, { reads: 1 });
    });

    it('a 204 that carries a body anyway: the body is not read as the answer, nor as the next one', async () => {
      await unknownOnceEach((socket) => socket.write(head('204 No Content', [json]) + txText({ id: 'tr_evil', state: 'paid' })), /not a transaction/, { reads: 1 });
    });

    it('a 304 with a Content-Length and no body: a write is OutcomeUnknown, a read Rejected (never followed)', async () => {
      wire.play((socket) => socket.write(head('304 Not Modified', [['Content-Length', 300]])));
      const create = await outcome(client.createTransaction(request()));
      expect(create.value).toBeInstanceOf(OutcomeUnknown);
      const read = await outcome(client.getTransaction('tr_1'));
      expect(read.value).toBeInstanceOf(Rejected);
      expect(wire.count('POST', '/transactions')).toBe(1);
      await poolStillWorks();
    });

    it('not HTTP at all (a bare JSON body, no status line): no answer', async () => {
      await unknownOnceEach((socket) => socket.write(txText()), /no answer/, { freed: true });
    });

    it('a status line with a bad code ("2OO"): no answer', async () => {
      await unknownOnceEach((socket) => socket.write(`HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\n{}`), /no answer/, { freed: true });
    });

    it('headers longer than undici takes (64 KiB of them, at once): no answer, at once', async () => {
      await unknownOnceEach((socket) => {
        socket.write(head('201 Created', Array.from({ length: 64 }, (_, n): Header => [`X-Pad-${n}`, 'x'.repeat(1024)])));
      }, /no answer/, { freed: true });
      expect(timers.fired).toBe(0);
    });

    it('a whole answer with its length and Connection: close, then a close: read whole', async () => {
      wire.play((socket) => socket.end(head('201 Created', [json, length(txText()), ['Connection', 'close']]) + txText()));
      expect(await client.createTransaction(request())).toMatchObject({ id: 'tr_1' });
      await poolStillWorks();
    });

    it('a body with a UTF-8 byte order mark: unreadable (JSON.parse refuses it), never acted on', async () => {
      await unknownOnceEach((socket) => {
        const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(txText())]);
        socket.write(Buffer.concat([Buffer.from(head('201 Created', [json, length(body)])), body]));
      }, /could not be read/);
    });

    // DEFECT (low): a body that is not UTF-8 is decoded lossily (client.ts send(): `answer.bytes.toString('utf8')`),
    // each bad byte becoming U+FFFD, and the garbled answer is then acted on as if whole and true: here a created
    // transaction whose external_id is not the one the service sent. JSON must be UTF-8 (RFC 8259 §8.1): such a body
    // should be unreadable (a write OutcomeUnknown, a read Retryable), e.g. decoded with
    // `new TextDecoder('utf-8', { fatal: true })`, a decoding error read as `readable = false`.
    it('a body that is not valid UTF-8 (0xFF inside a string): unreadable, not decoded into U+FFFD and acted on', async () => {
      await unknownOnceEach((socket) => {
        const [before, after] = txText().split('E-1') as [string, string];
        const body = Buffer.concat([Buffer.from(`${before}E-1`), Buffer.from([0xff, 0xfe]), Buffer.from(after)]);
        socket.write(Buffer.concat([Buffer.from(head('201 Created', [json, length(body)])), body]));
      }, /could not be read/);
    });
  });

  describe('the stop signal', () => {
    it('fired mid-body on a read: the read ends at once, Retryable, not retried, its connection freed', async () => {
      wire.play((socket) => {
        const body = txText();
        socket.write(head('200 OK', [json, length(body)]) + body.slice(0, 20));
      });
      const stop = new AbortController();
      realSetTimeout(() => stop.abort(), 40);
      const read = await outcome(client.getTransaction('tr_1', { signal: stop.signal }));
      expect(read.value).toBeInstanceOf(Retryable);
      expect((read.value as Error).message).toMatch(/could not be read/);
      expect(wire.count('GET', '/transactions/tr_1')).toBe(1);
      expect(await eventually(() => [...wire.played].every((s) => s.destroyed))).toBe(true);
      expect(timers.fired).toBe(0);
      await poolStillWorks();
    });

    it('fired before the headers on a read: no answer, Retryable, at once', async () => {
      const stop = new AbortController();
      // Fired once the wire has the whole request, and nothing answered: not after a fixed 40 ms, which a loaded machine
      // passed before the request was even sent (a fresh clone's run saw no GET at all).
      wire.play(() => stop.abort());
      const read = await outcome(client.getTransaction('tr_1', { signal: stop.signal }));
      expect(read.value).toBeInstanceOf(Retryable);
      expect((read.value as Error).message).toMatch(/no answer \(stopped\)/);
      // Ended by the stop, not by the timeout (whose timer never fired), however loaded the machine.
      expect(timers.fired).toBe(0);
      expect(wire.count('GET', '/transactions/tr_1')).toBe(1);
      await poolStillWorks();
    });

    it('fired before the call (before connecting): nothing is sent, Retryable at once', async () => {
      const stop = new AbortController();
      stop.abort();
      const read = await outcome(client.getTransaction('tr_1', { signal: stop.signal }));
      expect(read.value).toBeInstanceOf(Retryable);
      expect((read.value as Error).message).toMatch(/stopped/);
      expect(timers.fired).toBe(0);
      expect(wire.seen).toEqual([]);
      expect(timers.made).toBe(timers.cleared + timers.fired);
      await poolStillWorks();
    });

    it('fired mid-body on a write: the write is not cut off, it runs to its timeout, OutcomeUnknown, sent once', async () => {
      wire.play((socket) => {
        const body = txText();
        socket.write(head('201 Created', [json, length(body)]) + body.slice(0, 20));
      });
      const stop = new AbortController();
      realSetTimeout(() => stop.abort(), 40);
      const create = await outcome(client.createTransaction(request(), { signal: stop.signal }));
      expect(create.value).toBeInstanceOf(OutcomeUnknown);
      // Not cut off at the stop (40 ms): it ran towards its timeout. Half of it, not all: the call starts before
      // outcome() reads the clock, and a loaded machine put 9 ms between the two (324.7 ms measured, test:busy).
      expect(create.ms).toBeGreaterThanOrEqual(TIMEOUT / 2);
      expect(create.ms).toBeLessThan(TIMEOUT + SLACK);
      expect(wire.count('POST', '/transactions')).toBe(1);
      await poolStillWorks();
    });

    it('fired mid-body on a write whose answer then comes whole before the timeout: the answer is read', async () => {
      wire.play((socket) => {
        const body = txText();
        socket.write(head('201 Created', [json, length(body)]) + body.slice(0, 20));
        later(socket, 100, () => socket.write(body.slice(20)));
      });
      const stop = new AbortController();
      realSetTimeout(() => stop.abort(), 40);
      expect(await client.createTransaction(request(), { signal: stop.signal })).toMatchObject({ id: 'tr_1' });
      await poolStillWorks();
    });
  });
});

describe('the exchange itself, on a dispatcher of one connection', () => {
  it('a write whose time is up while it waits for the connection is never sent, however long the connection stays busy', async () => {
    const wire = new Wire();
    await wire.start();
    const agent = new Agent({ connections: 1 });
    const origin = new URL(wire.url).origin;
    const post = (path: string, timeoutMs: number) => exchange(agent, { origin, path, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }, { timeoutMs, maxAnswerBytes: CAP });
    try {
      wire.play(() => {}); // never answers
      const blocker = post('/blocker', 500).catch((e: unknown) => e as Error);
      await eventually(() => wire.seen.length === 1);
      const started = performance.now();
      const waiting = await post('/waiting', 100).catch((e: unknown) => e as Error);
      expect(waiting).toBeInstanceOf(Error);
      expect((waiting as Error).message).toBe('no answer within 100 ms');
      expect(performance.now() - started).toBeLessThan(100 + SLACK);
      expect((await blocker as Error).message).toBe('no answer within 500 ms');
      // The blocker's connection is gone; the waiting write, ended long before, does not go out on the next one.
      wire.act = honest;
      await new Promise((resolve) => realSetTimeout(resolve, 50));
      expect(wire.seen.map((s) => s.path)).toEqual(['/blocker']);
      expect(await post('/v1/transactions', 500)).toMatchObject({ status: 201, complete: true });
      expect(wire.seen.map((s) => s.path)).toEqual(['/blocker', '/v1/transactions']);
    } finally {
      await agent.close();
      await wire.stop();
    }
  });
});

describe('the exchange given a timeout longer than a Node timer can hold', () => {
  // DEFECT (low): exchange.ts arms `setTimeout(…, limits.timeoutMs)`; Node clamps a delay over 2^31-1 ms to 1 ms
  // (with a TimeoutOverflowWarning), so a timeout of ~25 days or more ends every exchange at once: every write
  // OutcomeUnknown, every read Retryable. The configuration allows it (config.ts: service.timeout_ms is any positive
  // integer). Fix: bound service.timeout_ms in the schema (e.g. .max(600_000)), and/or clamp in exchange.ts.
  it('a timeout of 2^31 ms does not end an exchange answered in 50 ms', async () => {
    const server = createServer((socket) => {
      socket.once('data', () => realSetTimeout(() => socket.end(head('200 OK', [length('{}'), ['Connection', 'close']]) + '{}'), 50));
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const agent = new Agent();
    try {
      const answer = await exchange(agent, { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, path: '/x', method: 'GET', headers: {}, body: undefined }, { timeoutMs: 2 ** 31, maxAnswerBytes: CAP });
      expect(answer).toMatchObject({ status: 200, complete: true });
    } finally {
      await agent.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
