/**
 * A shutdown ends every pause before a retry at once, and however many calls
 * pause together on the engine's one stop signal, Node is never led to print a
 * "possible memory leak" warning to the user (MaxListenersExceededWarning: a
 * listener per pause past ten).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/api/client.js';
import { Retryable } from '../../src/api/errors.js';

const CALLS = 24;

describe('calls pausing before a retry, then a stop', () => {
  const warnings: Error[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning);
  afterEach(() => {
    process.off('warning', onWarning);
  });

  it(`${CALLS} reads pausing at once on one stop signal: no warning, and the stop ends every pause`, async () => {
    process.on('warning', onWarning);
    let seen = 0;
    let allSeen: () => void = () => {};
    const arrived = new Promise<void>((resolve) => {
      allSeen = resolve;
    });
    // A service that asks each call to come back in a minute (429, Retry-After): every call pauses for that long unless stopped.
    const server = createServer((request, response) => {
      request.resume();
      response.writeHead(429, { 'retry-after': '60', 'content-type': 'application/json' }).end('{"errors":[]}');
      seen += 1;
      if (seen === CALLS) allSeen();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new PayoutClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, credentials: { apiKey: 'k', apiSecret: 's' },
      timeoutMs: 5_000, retry: { baseMs: 10, capMs: 120_000, attempts: 5 }, maxAnswerBytes: 1 << 20, connections: CALLS,
    });
    const stop = new AbortController();
    try {
      const calls = Array.from({ length: CALLS }, (_, i) => client.getTransaction(`tr_${i}`, { signal: stop.signal }).then(() => 'answered', (error: unknown) => error));
      await arrived;
      // Each call's answer is read and its pause begun within a turn or two of its arrival.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      stop.abort();
      const outcomes = await Promise.all(calls);
      for (const outcome of outcomes) expect(outcome).toBeInstanceOf(Retryable);
      expect(seen).toBe(CALLS);
      // A warning is emitted on the next tick after the listener that caused it.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
    } finally {
      await client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
