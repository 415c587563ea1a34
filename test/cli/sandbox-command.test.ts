import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/sandbox.js';
import { createBody } from '../helpers/requests.js';
import { runCli, startCli } from '../helpers/cli.js';

const READY = /base URL\s+(\S+)\n\s+API key\s+(\S+)\n\s+API secret\s+(\S+)/;

describe('paybatch CLI and `paybatch sandbox`', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints help for the program and for every command, exiting 0', async () => {
    const top = await runCli(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/sandbox \[options\]/);
    const sandbox = await runCli(['sandbox', '--help']);
    expect(sandbox.code).toBe(0);
    for (const option of ['--port', '--host', '--config', '--db']) expect(sandbox.stdout).toContain(option);
  });

  it('exits 64 on a usage error, with a message', async () => {
    const bad = await runCli(['sandbox', '--port', 'abc']);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toMatch(/--port .* is invalid/);
    expect((await runCli(['no-such-command'])).code).toBe(64);
  });

  it('exits 78 on a bad configuration, naming the file and the key', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ faults: { http_500_rate: 2 }, typo_key: true }));
    const bad = await runCli(['sandbox', '--config', file]);
    expect(bad.code).toBe(78);
    expect(bad.stderr).toContain(file);
    expect(bad.stderr).toMatch(/faults\.http_500_rate: .*1/);
    expect(bad.stderr).toMatch(/typo_key/);
    const missing = await runCli(['sandbox', '--config', join(dir, 'missing.json')]);
    expect(missing.code).toBe(78);
    expect(missing.stderr).toMatch(/cannot read sandbox config/);
  });

  it('serves the interface, stops on SIGTERM with exit 0, and keeps --db state through a SIGKILL', async () => {
    const db = join(dir, 'state.db');
    const first = await startCli(['sandbox', '--port', '0', '--db', db], READY);
    const [, url, apiKey, apiSecret] = first.match as unknown as [string, string, string, string];
    const target = { url, apiKey, apiSecret };
    const created = await call(target, 'POST', '/transactions', createBody('ngaCash'));
    expect(created.status).toBe(201);
    expect((await call(target, 'POST', `/transactions/${created.body.id}/fund`)).status).toBe(200);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await startCli(['sandbox', '--port', '0', '--db', db], READY);
    const [, url2] = second.match as unknown as [string, string];
    const again = await call({ ...target, url: url2 }, 'GET', `/transactions/${created.body.id}`);
    expect(again.status).toBe(200);
    expect(again.body.funded_at).toBe((await call({ ...target, url: url2 }, 'GET', `/transactions/${created.body.id}`)).body.funded_at);
    expect(again.body.funded_at).not.toBeNull();
    expect(second.output()).toContain(`kept in ${db}`);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });
});
