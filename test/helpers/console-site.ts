/**
 * A workspace served by a real `paybatch watch` child process with its console
 * on, on the embedded sandbox, with a policy of three people: ada approves
 * (her key pair written here), olga operates (cancels), vic views. For the
 * console's browser and HTTP tests.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeys } from '../../src/approvals/keys.js';
import { BIN, runCli } from './cli.js';

export interface ConsoleSite {
  dir: string;
  home: string;
  url: string;
  adaKey: string;
  watch: ChildProcess;
  stderr(): string;
  /** A one-time code for `name`, from `paybatch console login`. */
  code(name: string): Promise<string>;
  /** Drops a batch into the inbox (written aside, then renamed in, as a careful exporter does). */
  drop(name: string, text: string): void;
  stop(): Promise<void>;
}

const DEMO = fileURLToPath(new URL('../../fixtures/demo-batch.csv', import.meta.url));

/** Rows of the demo batch: those that pay, and DEMO-014, which the sandbox holds as manual (its account ends in 55). */
export function demoLines(ids: readonly string[]): string {
  const [header, ...rows] = readFileSync(DEMO, 'utf8').split('\n').filter((l) => l !== '');
  return `${[header, ...rows.filter((r) => ids.includes(r.split(',')[0] as string))].join('\n')}\n`;
}

/** Waits for `pattern` in a growing text, or fails naming what was seen. */
async function waitFor(text: () => string, pattern: RegExp, ms: number): Promise<RegExpMatchArray> {
  const until = Date.now() + ms;
  for (;;) {
    const match = text().match(pattern);
    if (match) return match;
    if (Date.now() > until) throw new Error(`no ${pattern} within ${ms} ms:\n${text()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `console`: more of the console's configuration (trust_proxy, more people), over the site's own. */
export async function startConsoleSite(options: { console?: { people?: Record<string, { role: string }>; [key: string]: unknown } } = {}): Promise<ConsoleSite> {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-console-'));
  const home = join(dir, 'ws');
  mkdirSync(home);
  const ada = generateKeys();
  const adaKey = join(dir, 'ada.key');
  writeFileSync(adaKey, ada.privatePem, { mode: 0o600 });
  const config = {
    batch: { invalid_rows: 'skip_invalid' },
    approvals: { enabled: true, people: { inbox: { role: 'submitter', public_key: generateKeys().publicPem }, ada: { role: 'approver', public_key: ada.publicPem } }, rules: [{ approvers: 1 }] },
    console: { enabled: true, listen: { host: '127.0.0.1', port: 0 }, ...options.console, people: { olga: { role: 'operator' }, vic: { role: 'viewer' }, ...options.console?.people } },
    watch: { listen: { host: '127.0.0.1', port: 0 }, stable_ms: 200, results_every_ms: 500 },
  };
  writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify(config, null, 2));
  const watch = spawn(process.execPath, [BIN, 'watch', '--home', home], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  watch.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  watch.stdout?.resume();
  const [, url] = await waitFor(() => stderr, /console at (http:\/\/\S+)/, 30_000);
  await waitFor(() => stderr, /watching /, 30_000);
  return {
    dir, home, url: url as string, adaKey, watch,
    stderr: () => stderr,
    async code(name) {
      const done = await runCli(['console', 'login', name, '--home', home]);
      if (done.code !== 0) throw new Error(`console login ${name}: ${done.stderr}`);
      return done.stdout.trim();
    },
    drop(name, text) {
      const aside = join(dir, `${name}.part`);
      writeFileSync(aside, text);
      writeFileSync(join(home, 'inbox', name), readFileSync(aside));
    },
    async stop() {
      const exited = new Promise((resolve) => watch.once('close', resolve));
      watch.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
