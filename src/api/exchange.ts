/**
 * One HTTP request to the service and its answer read whole, through undici's
 * dispatcher with a handler of its own. undici's `request()` hands each answer
 * over as a stream, and a total timeout needs an `AbortSignal.timeout` (a signal,
 * an event target and a timer): at a thousand calls a second that machinery was
 * a tenth of paybatch's CPU per row (bench:submit). Here the answer's pieces are
 * gathered as they come, and one plain timer bounds the whole exchange.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

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

/** Resolves with the answer once it is read (or known unreadable); rejects when no answer came at all. */
export function exchange(dispatcher: Dispatcher, request: ExchangeRequest, limits: ExchangeLimits): Promise<Exchanged> {
  return new Promise<Exchanged>((resolve, reject) => {
    let controller: Dispatcher.DispatchController | null = null;
    /** Why the exchange was ended from here (timeout, stop, too long), for an abort asked before undici started it. */
    let endedBecause: Error | null = null;
    let answer: Exchanged | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;

    const end = (reason: Error): void => {
      endedBecause ??= reason;
      if (controller && !controller.aborted) controller.abort(reason);
    };
    const timer = setTimeout(() => end(new Error(`no answer within ${limits.timeoutMs} ms`)), limits.timeoutMs);
    const onStop = (): void => end(new Error('stopped'));
    limits.stop?.addEventListener('abort', onStop, { once: true });

    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      limits.stop?.removeEventListener('abort', onStop);
      outcome();
    };
    /** The answer had begun: what came of it is told, unreadable (a reset, a timeout, too long: it may have taken effect). */
    const cutOff = (error: Error): void => settle(() => (answer ? resolve({ ...answer, bytes: Buffer.alloc(0), complete: false }) : reject(error)));

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (endedBecause) started.abort(endedBecause);
      },
      onResponseStart(started, statusCode, headers) {
        // An informational answer (100 Continue) is followed by the real one.
        if (statusCode < 200) return;
        answer = { status: statusCode, headers, bytes: Buffer.alloc(0), complete: false };
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
      dispatcher.dispatch({
        origin: request.origin, path: request.path, method: request.method, headers: request.headers, body: request.body,
        headersTimeout: limits.timeoutMs, bodyTimeout: limits.timeoutMs,
      }, handler);
    } catch (error) {
      cutOff(error as Error);
    }
    // A stop that came before the call was made.
    if (limits.stop?.aborted) onStop();
  });
}
