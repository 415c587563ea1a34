/** One JSON POST with a deadline, for the webhook and chat channels. */
import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import { DeliveryFailed } from './sender.js';

export function httpDispatcher(): Dispatcher {
  return new Agent({ connections: 4, keepAliveTimeout: 5_000 });
}

/** Why a request got no answer, without the URL (a chat URL is a secret): a code, never the error's text. */
function noAnswer(error: unknown, timeoutMs: number, timedOut: boolean, stopped: boolean): DeliveryFailed {
  if (stopped) return new DeliveryFailed('interrupted: paybatch is stopping');
  if (timedOut) return new DeliveryFailed(`no answer within ${timeoutMs} ms`);
  const code = (error as { code?: unknown }).code ?? (error as { cause?: { code?: unknown } }).cause?.code;
  return new DeliveryFailed(`no answer: ${typeof code === 'string' ? code : 'network error'}`);
}

/** POSTs `body`; resolves on a 2xx answer. A redirect is a failure: the signature names the URL, and a secret is not sent on. */
export async function postJson(dispatcher: Dispatcher, url: string, body: string, headers: Record<string, string>, timeoutMs: number, stop: AbortSignal): Promise<void> {
  const timeout = AbortSignal.timeout(timeoutMs);
  let response: Dispatcher.ResponseData;
  try {
    response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'paybatch-notifier', ...headers },
      body,
      dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.any([timeout, stop]),
    });
  } catch (error) {
    throw noAnswer(error, timeoutMs, timeout.aborted, stop.aborted);
  }
  // The answer's body is not needed; reading it (capped by bodyTimeout) frees the connection.
  await response.body.dump({ limit: 64 * 1024 }).catch(() => {});
  if (response.statusCode < 200 || response.statusCode > 299) throw new DeliveryFailed(`answered HTTP ${response.statusCode}`);
}
