/**
 * Which payout service paybatch talks to: the configured one, or, with no base
 * URL, the sandbox started in-process (the embedded default), on the
 * workspace's state (see embedded-sandbox.ts). The secret is
 * read here and handed to the client only; `describe` never includes it.
 */
import { readFileSync } from 'node:fs';
import { PayoutClient } from '../api/client.js';
import type { TokenSource } from '../api/rate-limiter.js';
import { configuredRateLimiter } from '../api/rate-limiter.js';
import type { Credentials } from '../api/signing.js';
import type { Clock } from '../clock.js';
import { ConfigError } from '../errors.js';
import type { RunningSandbox } from '../sandbox/start.js';
import type { ServiceConfig } from '../config/config.js';
import { embeddedSandboxCredentials, embeddedSandboxFiles } from './embedded-sandbox.js';

export interface ServiceConnection {
  client: PayoutClient;
  /** The key and secret, for verifying webhook deliveries [D3]; never logged. */
  credentials: Credentials;
  /** The sandbox when it was started in-process, for its operator controls. */
  embedded: RunningSandbox | null;
  /** One line for people and logs: where, and as whom; never the secret. */
  describe: string;
  close(): Promise<void>;
}

/** A base URL for people: a user name or password written into it is never shown. */
function withoutUserInfo(url: string): string {
  const parsed = new URL(url);
  if (!parsed.username && !parsed.password) return url;
  parsed.username = '';
  parsed.password = '';
  return `${parsed.href} (its user name and password not shown)`;
}

function readSecret(file: string): string {
  let secret: string;
  try {
    secret = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new ConfigError(`cannot read the API secret file ${file}: ${(error as Error).message}`);
  }
  if (!secret) throw new ConfigError(`the API secret file ${file} is empty`);
  return secret;
}

export async function connectService(
  service: ServiceConfig,
  options: {
    clock?: Clock; sandboxLog?: (line: string) => void; log?: (event: string, fields: Record<string, unknown>) => void; connections?: number;
    /** The workspace whose embedded sandbox is used (its state and secret kept there); absent: one in memory, for this process alone. */
    home?: string;
    /** Where service.rate_limits' tokens are taken: the shared database's buckets with several workers; absent: this process's own. */
    rateTokens?: TokenSource;
  } = {},
): Promise<ServiceConnection> {
  const rateLimiter = configuredRateLimiter(service.rate_limits, options.rateTokens);
  const clientOptions = {
    rateLimiter,
    clock: options.clock,
    // As many connections as calls may be in flight (engine.concurrency): with fewer, the calls past them wait for one.
    connections: options.connections,
    log: options.log,
    timeoutMs: service.timeout_ms,
    maxAnswerBytes: service.max_answer_bytes,
    retry: { baseMs: service.retry.base_ms, capMs: service.retry.cap_ms, attempts: service.retry.attempts },
  };
  if (service.base_url) {
    const apiSecret = service.api_secret_file ? readSecret(service.api_secret_file) : (service.api_secret as string);
    const credentials = { apiKey: service.api_key as string, apiSecret };
    const client = new PayoutClient({ ...clientOptions, baseUrl: service.base_url, credentials });
    return { client, credentials, embedded: null, describe: `payout service ${withoutUserInfo(service.base_url)} (key ${service.api_key})`, close: () => client.close() };
  }
  // Loaded only when it runs: a paybatch that talks to a real service never holds the simulator in memory.
  const { startSandbox } = await import('../sandbox/start.js');
  const files = options.home === undefined ? null : embeddedSandboxFiles(options.home);
  const kept = files ? embeddedSandboxCredentials(files) : {};
  const sandbox = await startSandbox({ config: { port: 0, ...kept }, dbFile: files?.database, clock: options.clock, log: options.sandboxLog });
  const credentials = { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret };
  const client = new PayoutClient({ ...clientOptions, baseUrl: sandbox.url, credentials });
  return {
    client,
    credentials,
    embedded: sandbox,
    describe: `embedded sandbox ${sandbox.url}, its state in ${files ? files.database : 'memory'} (no service configured: nothing real is paid)`,
    async close() {
      await client.close();
      await sandbox.stop();
    },
  };
}
