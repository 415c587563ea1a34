/**
 * One HTTP request to the service and its answer read whole, through undici's
 * dispatcher with a handler of its own. undici's `request()` hands each answer
 * over as a stream, and a total timeout needs an `AbortSignal.timeout` (a signal,
 * an event target and a timer): at a thousand calls a second that machinery was
 * a tenth of paybatch's CPU per row (bench:submit). Here the answer's pieces are
 * gathered as they come, and one plain timer bounds the whole exchange.
 *
 * A timeout or a stop that comes before the request is on a connection (one
 * still being made, or all of them busy) ends the exchange at once: undici
 * asks this handler whether to go on before it writes anything, and then
 * writes nothing.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { whenStopped } from './when-stopped.js';

export interface ExchangeRequest {
  origin: string;
  path: string;
  method: Dispatcher.HttpMethod;
  headers: Record<string, string>;
  body: string | undefined;
}

export interface ExchangeLimits {
  /** The whole exchange, from sending to the answer's last byte. */
  timeoutMs: number;
  /** A longer answer is not kept: it is read as unreadable. */
  maxAnswerBytes: number;
  /** Ends the exchange at once when it fires. */
  stop?: AbortSignal;
}

/** An answer: its status and headers, and its body whole (`complete`), or not readable whole (cut off, too long). */
export interface Exchanged {
  status: number;
  headers: IncomingHttpHeaders;
  bytes: Buffer;
  complete: boolean;
}

/** The longest delay Node's timers wait for (2^31 − 1 ms, some 24.8 days). */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** Resolves with the answer once it is read (or known unreadable); rejects when no answer came at all. */
export function exchange(dispatcher: Dispatcher, request: ExchangeRequest, limits: ExchangeLimits): Promise<Exchanged> {
  return new Promise<Exchanged>((resolve, reject) => {
    // Stopped before it began: nothing is sent.
    if (limits.stop?.aborted) {
      reject(new Error('stopped'));
      return;
    }
    let controller: Dispatcher.DispatchController | null = null;
    /** Why the exchange was ended from here (timeout, stop, too long), for an abort asked before undici started it. */
    let endedBecause: Error | null = null;
    /** The answer's status and headers, once it has begun. */
    let answer: Pick<Exchanged, 'status' | 'headers'> | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;

    const end = (reason: Error): void => {
      endedBecause ??= reason;
      // Not on a connection yet: nothing was written, nothing will be (onRequestStart below).
      if (!controller) cutOff(reason);
      else if (!controller.aborted) controller.abort(reason);
    };
    // Node waits 1 ms for a delay past its timers' limit: a longer one is waited for as the longest there is.
    const timer = setTimeout(() => end(new Error(`no answer within ${limits.timeoutMs} ms`)), Math.min(limits.timeoutMs, LONGEST_TIMER_MS));
    const forgetStop = limits.stop ? whenStopped(limits.stop, () => end(new Error('stopped'))) : () => {};

    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      forgetStop();
      outcome();
    };
    /** Ends the exchange: its answer unreadable if it had begun (a reset, a timeout, too long: it may have taken effect), else no answer. */
    const cutOff = (error: Error): void => settle(() => (answer ? resolve({ ...answer, bytes: Buffer.alloc(0), complete: false }) : reject(error)));

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (endedBecause) started.abort(endedBecause);
      },
      onResponseStart(started, statusCode, headers) {
        // An informational answer (102, 103) is followed by the real one. (undici itself drops a connection that answers
        // 100 Continue unasked: an answer then unreadable.)
        if (statusCode < 200) return;
        answer = { status: statusCode, headers };
        const declared = Number(headers['content-length'] ?? Number.NaN);
        if (Number.isSafeInteger(declared) && declared > limits.maxAnswerBytes) started.abort(new Error('the answer is too long'));
      },
      onResponseData(started, chunk) {
        if (!answer) return;
        size += chunk.length;
        if (size > limits.maxAnswerBytes) {
          started.abort(new Error('the answer is too long'));
          return;
        }
        chunks.push(chunk);
      },
      onResponseEnd() {
        settle(() => (answer ? resolve({ ...answer, bytes: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size), complete: true }) : reject(new Error('the answer ended before it began'))));
      },
      onResponseError(_controller, error) {
        cutOff(endedBecause ?? error);
      },
    };
    try {
      // undici's own timeouts off: they run on a coarse clock of its own and ended calls up to a fifth early; the timer
      // above bounds the whole exchange alone.
      dispatcher.dispatch({
        origin: request.origin, path: request.path, method: request.method, headers: request.headers, body: request.body,
        headersTimeout: 0, bodyTimeout: 0,
      }, handler);
    } catch (error) {
      cutOff(error as Error);
    }
  });
}
