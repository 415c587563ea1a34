/** Runs the built `paybatch` binary as a real child process. */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { requireTier } from '../tiers.js';

export const BIN = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

function assertBuilt(): void {
  requireTier('the built paybatch binary', ['system']);
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first (npm test does)`);
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<Finished> {
  assertBuilt();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...options.env }, cwd: options.cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

export interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<Finished>;
}

/** Starts the binary and resolves once its standard output matches `ready`. */
export function startCli(args: string[], ready: RegExp, timeoutMs = 10_000): Promise<Started & { match: RegExpMatchArray }> {
  assertBuilt();
  const child = spawn(process.execPath, [BIN, ...args]);
  let stdout = '';
  let stderr = '';
  const exited = new Promise<Finished>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${ready} within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const match = stdout.match(ready);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match, output: () => stdout, exited });
      }
    });
    void exited.then((f) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${f.code ?? f.signal} before ready: ${f.stderr}`));
    });
  });
}
