import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { mergeDeep } from '../../src/config/json.js';
import { loadSandboxConfig } from '../../src/sandbox/config.js';

describe('sandbox configuration', () => {
  it('loads the defaults: corridors, rates and balances as data', () => {
    const config = loadSandboxConfig();
    expect(config.corridors.map((c) => c.id)).toEqual(['gbr-bank', 'eur-iban-bank', 'global-usd-bank', 'nga-bank', 'nga-cash']);
    expect(config.rates['USD/GBP']).toMatch(/^\d+\.\d+$/);
    expect(config.kyc.mode).toBe('waived');
    expect(config.funding_window_ms).toBe(3_600_000);
  });

  it('accepts every sandbox configuration shipped in fixtures/', () => {
    const dir = fileURLToPath(new URL('../../fixtures/', import.meta.url));
    const files = readdirSync(dir).filter((f) => /^sandbox-.*\.json$/.test(f));
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const file of files) expect(() => loadSandboxConfig({ file: `${dir}${file}` }), file).not.toThrow();
    expect(loadSandboxConfig({ file: `${dir}sandbox-kyc-review.json` }).kyc.mode).toBe('review');
  });

  it('merges objects key by key and replaces arrays', () => {
    expect(mergeDeep({ a: { b: 1, c: 2 }, list: [1, 2] }, { a: { c: 3 }, list: [9] })).toEqual({ a: { b: 1, c: 3 }, list: [9] });
  });

  it('names every bad key', () => {
    const attempt = () => loadSandboxConfig({ overrides: { port: -1, balances: { XYZ: '10' }, rates: { 'USD/GBP': '0' } } as never });
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toMatch(/port:/);
      expect(message).toMatch(/balances\.XYZ/);
      expect(message).toMatch(/rates\.USD\/GBP: a positive decimal string/);
    }
  });
});
