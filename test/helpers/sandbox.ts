/** Test helpers: a real sandbox over real HTTP on a manual clock, and a signed client for it. */
import { authHeaders } from '../../src/api/signing.js';
import { ManualClock } from '../../src/clock.js';
import type { SandboxConfigInput } from '../../src/sandbox/config.js';
import type { RunningSandbox, SandboxOptions } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';

export interface TestSandbox extends RunningSandbox {
  clock: ManualClock;
  logs: string[];
}

export async function testSandbox(config: SandboxConfigInput = {}, dbFile?: string, latency?: SandboxOptions['latency']): Promise<TestSandbox> {
  const clock = new ManualClock();
  const logs: string[] = [];
  const sandbox = await startSandbox({ config: { port: 0, ...config }, dbFile, clock, autoTick: false, log: (l) => logs.push(l), latency });
  return Object.assign(sandbox, { clock, logs });
}

export interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests inspect arbitrary JSON
  headers: Headers;
}

/** A signed call to the service interface [D2]; `path` is relative to the base URL. */
export async function call(
  sandbox: Pick<RunningSandbox, 'url' | 'apiKey' | 'apiSecret'>,
  method: string,
  path: string,
  body?: unknown,
  options: { headers?: Record<string, string>; omit?: string[]; sign?: boolean; raw?: string } = {},
): Promise<Answer> {
  const url = `${sandbox.url}${path}`;
  const text = options.raw ?? (body === undefined ? '' : JSON.stringify(body));
  const signed = options.sign === false ? {} : authHeaders({ apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret }, method, url, text);
  const headers: Record<string, string> = { 'content-type': 'application/json', ...signed, ...options.headers };
  for (const name of options.omit ?? []) delete headers[name];
  const response = await fetch(url, {
    method,
    headers,
    body: text === '' ? undefined : text,
  });
  const received = await response.text();
  return { status: response.status, body: received === '' ? undefined : JSON.parse(received), headers: response.headers };
}

/** A call to the operator controls (no signature). */
export async function operator(sandbox: RunningSandbox, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${sandbox.operatorUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text), headers: response.headers };
}
