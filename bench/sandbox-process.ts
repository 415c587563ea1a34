/** Starts `paybatch sandbox` as its own process for a benchmark, so that it has a core of its own. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CallSpread } from './call-spread.js';

const bin = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

export interface SandboxProcess {
  url: string;
  key: string;
  secret: string;
  pid: number;
  /** The CPU time the sandbox process has used so far (user and system), in seconds. */
  cpuSeconds(): number;
  stop(): void;
  /** Stops the sandbox and, once it has exited, gives how long its calls took as it saw them (see call-timer.ts); null when they were not timed. */
  stopTimed(): Promise<CallSpread | null>;
}

/** `timesFile`: where the sandbox writes its calls' durations at exit; they are timed only when given. */
export function startSandboxProcess(configFile: string, nodeArgs: string[] = [], timesFile?: string): Promise<SandboxProcess> {
  const timer = timesFile === undefined ? [] : ['--import', new URL('./call-timer.js', import.meta.url).href];
  const env = timesFile === undefined ? process.env : { ...process.env, PAYBATCH_BENCH_CALL_TIMES: timesFile };
  const child = spawn(process.execPath, [...nodeArgs, ...timer, bin, 'sandbox', '--port', '0', '--config', configFile], { stdio: ['ignore', 'pipe', 'inherit'], env });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /base URL\s+(\S+)\n\s+API key\s+(\S+)\n\s+API secret\s+(\S+)/.exec(out);
      if (!m) return;
      const stop = (): void => {
        child.kill('SIGTERM');
      };
      const stopTimed = async (): Promise<CallSpread | null> => {
        stop();
        await exited;
        return timesFile === undefined ? null : (JSON.parse(readFileSync(timesFile, 'utf8')) as CallSpread);
      };
      resolve({ url: m[1] as string, key: m[2] as string, secret: m[3] as string, pid: child.pid as number, cpuSeconds: () => cpuSecondsOf(child.pid as number), stop, stopTimed });
    });
  });
}

export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

/** User and system CPU time of a process so far, in seconds (from /proc: fields 14 and 15 of its stat, in clock ticks). */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: the fields counted from after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** Linux's USER_HZ, 100 on every architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;
