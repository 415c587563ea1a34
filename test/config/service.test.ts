import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { connectService } from '../../src/config/service.js';
import { ConfigError } from '../../src/errors.js';
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
});
