import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { connectService } from '../../src/cli/service-connection.js';
import { ConfigError } from '../../src/errors.js';
import { eventually } from '../helpers/daemon.js';
import { testSandbox } from '../helpers/sandbox.js';

describe('configuring the payout service', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-service-'));
  const home = join(dir, 'none');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes the service from the environment over the file', () => {
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ service: { base_url: 'https://file.example/v1', api_key: 'file-key', api_secret: 'file-secret', timeout_ms: 5000 } }));
    const config = loadConfig({ file, env: { PAYBATCH_BASE_URL: 'https://env.example/v2', PAYBATCH_API_KEY: 'env-key' } });
    expect(config.service).toMatchObject({ base_url: 'https://env.example/v2', api_key: 'env-key', api_secret: 'file-secret', timeout_ms: 5000 });
  });

  it('refuses a base URL without credentials, and a URL that is not one, naming the key', () => {
    expect(() => loadConfig({ home, env: { PAYBATCH_BASE_URL: 'https://x.example/v1' } })).toThrow(/base_url needs api_key and api_secret/);
    const error = (() => {
      try {
        loadConfig({ home, env: { PAYBATCH_BASE_URL: 'ftp://x', PAYBATCH_API_KEY: 'k', PAYBATCH_API_SECRET: 's' } });
      } catch (e) {
        return e as Error;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error?.message).toMatch(/service\.base_url/);
  });

  it('refuses a delay longer than a timer waits for (Node would wait 1 ms), naming the key', () => {
    const file = join(dir, 'long.json');
    for (const [section, body] of [['service', { timeout_ms: 2 ** 31 }], ['service', { retry: { cap_ms: 2 ** 31 } }], ['intake', { stable_ms: 2 ** 31 }]] as const) {
      writeFileSync(file, JSON.stringify({ [section]: body }));
      expect(() => loadConfig({ file, env: {} }), `${section} ${JSON.stringify(body)}`).toThrow(/at most 2147483647 ms/);
    }
    writeFileSync(file, JSON.stringify({ service: { timeout_ms: 2 ** 31 - 1 } }));
    expect(loadConfig({ file, env: {} }).service.timeout_ms).toBe(2 ** 31 - 1);
  });

  it('starts the sandbox in-process when no base URL is configured (the embedded default)', async () => {
    const connection = await connectService(loadConfig({ home, env: {} }).service);
    try {
      expect(connection.embedded).not.toBeNull();
      expect(connection.describe).toMatch(/embedded sandbox http:\/\/127\.0\.0\.1:\d+\/v1/);
      expect((await connection.client.listCorridors('GBR')).length).toBeGreaterThan(0);
    } finally {
      await connection.close();
    }
  });

  it('uses a configured service with the secret from a file, and never describes the secret', async () => {
    const sandbox = await testSandbox();
    const secretFile = join(dir, 'secret');
    writeFileSync(secretFile, `${sandbox.apiSecret}\n`);
    const config = loadConfig({ home, env: { PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: sandbox.apiKey, PAYBATCH_API_SECRET_FILE: secretFile } });
    const connection = await connectService(config.service);
    try {
      expect(connection.embedded).toBeNull();
      expect((await connection.client.listCorridors('NGA')).length).toBe(3);
      expect(connection.describe).toContain(sandbox.url);
      expect(connection.describe).not.toContain(sandbox.apiSecret);
    } finally {
      await connection.close();
      await sandbox.stop();
    }
    const missing = loadConfig({ home, env: { PAYBATCH_BASE_URL: sandbox.url, PAYBATCH_API_KEY: 'k', PAYBATCH_API_SECRET_FILE: join(dir, 'nope') } });
    await expect(connectService(missing.service)).rejects.toThrow(/cannot read the API secret file/);
  });

  it('opens as many connections as calls may be in flight (engine.concurrency), past the client\'s default of 16', async () => {
    let open = 0;
    let most = 0;
    // Every call is held until all 24 are in at once; with fewer connections, fewer ever arrive, and the wait for them
    // ends at its bound (a failure), not after a fixed time.
    const held: (() => void)[] = [];
    const server = createServer((req, res) => {
      req.resume();
      open += 1;
      most = Math.max(most, open);
      held.push(() => {
        open -= 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const config = loadConfig({ home, env: { PAYBATCH_BASE_URL: url, PAYBATCH_API_KEY: 'k', PAYBATCH_API_SECRET: 's' } });
    const connection = await connectService(config.service, { connections: 24 });
    const calls = Promise.all(Array.from({ length: 24 }, (_, i) => connection.client.listCorridors(`C${String(i).padStart(2, '0')}`)));
    try {
      await eventually(() => most >= 24, 10_000, 'all 24 calls in flight at once').catch(() => undefined);
      expect(most).toBe(24);
    } finally {
      // Every call answered, those that came and those queued behind them, so that the client closes.
      const release = setInterval(() => held.splice(0).forEach((answer) => answer()), 5);
      await calls.catch(() => undefined);
      clearInterval(release);
      await connection.close();
      server.close();
    }
  });
});
