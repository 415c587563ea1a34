/** The workspace's embedded sandbox: its files, its key and secret, and the polling it gets. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describePolling, EMBEDDED_POLLING, embeddedPolling, embeddedSandboxCredentials, embeddedSandboxFiles } from '../../src/cli/embedded-sandbox.js';
import { configSchema } from '../../src/config/config.js';

describe('the embedded sandbox of a workspace', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-embedded-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('makes its key and secret once, readable by the owner only, and gives them back the same every time', () => {
    const files = embeddedSandboxFiles(join(dir, 'ws'));
    const first = embeddedSandboxCredentials(files);
    expect(first.api_secret.length).toBeGreaterThanOrEqual(32);
    expect(statSync(files.credentials).mode & 0o777).toBe(0o600);
    expect(statSync(files.database).mode & 0o777).toBe(0o600);
    expect(statSync(files.folder).mode & 0o777).toBe(0o700);
    expect(embeddedSandboxCredentials(files)).toEqual(first);
    // Another workspace, another secret.
    expect(embeddedSandboxCredentials(embeddedSandboxFiles(join(dir, 'other'))).api_secret).not.toBe(first.api_secret);
  });

  it('refuses a sandbox folder that is a link, and names a credentials file it cannot use', () => {
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    const linked = join(dir, 'linked');
    mkdirSync(linked);
    symlinkSync(elsewhere, join(linked, 'sandbox'));
    expect(() => embeddedSandboxCredentials(embeddedSandboxFiles(linked))).toThrow(/symbolic link/);
    const broken = embeddedSandboxFiles(join(dir, 'broken'));
    mkdirSync(broken.folder, { recursive: true });
    writeFileSync(broken.credentials, '{"api_key": "k"}');
    expect(() => embeddedSandboxCredentials(broken)).toThrow(/does not hold the embedded sandbox's api_key and api_secret/);
    expect(readFileSync(broken.credentials, 'utf8')).toBe('{"api_key": "k"}');
    writeFileSync(broken.credentials, '{"api_key": ');
    expect(() => embeddedSandboxCredentials(broken)).toThrow(/does not hold the embedded sandbox's api_key and api_secret/);
  });

  it('polls it every 2 s at first when engine.polling is left at its default, and keeps a polling that was set', () => {
    const defaults = configSchema.parse({}).engine.polling;
    expect(embeddedPolling(defaults)).toEqual({ polling: EMBEDDED_POLLING, chosen: true });
    expect(describePolling(EMBEDDED_POLLING, true)).toBe("each payout is read every 2s for its first 2m, then every 30s (the embedded sandbox's polling; engine.polling in the configuration sets another)");
    const set = { ...defaults, first_window_reads: 12 };
    expect(embeddedPolling(set)).toEqual({ polling: set, chosen: false });
    expect(describePolling(set, false)).toBe('each payout is read every 300s for its first 60m, then every 3600s (engine.polling)');
  });
});
