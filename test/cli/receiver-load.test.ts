/**
 * 600 slow clients against a real `paybatch watch`: half drip their headers,
 * half send the service's key and then drip a large body. The receiver reads
 * at most `watch.max_deliveries_in_flight` bodies at once, each within
 * `watch.max_body_bytes`, so the daemon's memory stays bounded; /healthz still
 * answers; the log holds a bounded number of refusal lines. The peak RSS is
 * printed (goal: under 150 MB).
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../chaos/free-port.js';
import { openWorkspace } from '../../src/workspace/workspace.js';
import { BIN } from '../helpers/cli.js';
import { eventually } from '../helpers/daemon.js';
import { fastSandboxForSuite } from '../helpers/engine.js';

const CLIENTS = 600;
const BODY_TIMEOUT_MS = 3_000;

const rssMb = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:')) ?? 'VmRSS: 0 kB';
  return Math.round(Number(/(\d+)/.exec(line)?.[1] ?? 0) / 1024);
};

describe('the webhook receiver under 600 slow clients', () => {
  const suite = fastSandboxForSuite('paybatch-receiver-load-');
  const { dir } = suite;

  it('keeps the daemon\'s memory bounded and /healthz answering', { timeout: 60_000 }, async () => {
    const home = join(dir, 'ws');
    openWorkspace(home);
    const port = await freePort();
    // Slow senders cut off after 3 s (10 s by default): the test lasts until the receiver has cut every one of them off.
    writeFileSync(join(home, 'paybatch.config.json'), JSON.stringify({ watch: { listen: { port }, body_timeout_ms: BODY_TIMEOUT_MS } }));
    const env = { ...process.env, PAYBATCH_HOME: home, PAYBATCH_BASE_URL: suite.sandbox.url, PAYBATCH_API_KEY: suite.sandbox.apiKey, PAYBATCH_API_SECRET: suite.sandbox.apiSecret };
    const child = spawn(process.execPath, [BIN, 'watch'], { env });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise((resolve) => child.on('close', resolve));
    const sockets: Socket[] = [];
    try {
      await eventually(() => /webhooks received at/.test(stderr), 15_000, 'watch started');
      const pid = child.pid as number;
      const idle = rssMb(pid);
      for (let i = 0; i < CLIENTS; i++) {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => {});
        sockets.push(socket);
        socket.setNoDelay(true);
        if (i % 2 === 0) {
          socket.write('POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\n'); // the rest of the headers never comes
        } else {
          socket.write(`POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization-Key: ${suite.sandbox.apiKey}\r\nAuthorization-Nonce: n-${i}\r\nAuthorization-Signature: ${'f'.repeat(128)}\r\nContent-Length: 60000\r\n\r\n`);
          socket.write(Buffer.alloc(30_000, 'a')); // half the body, the rest dripped
        }
      }
      const drip = setInterval(() => { for (const s of sockets) if (!s.destroyed) s.write('a'); }, 100);
      const open = (): number => sockets.filter((s) => !s.closed).length;
      // The memory's peak, sampled until the receiver has cut every slow sender off (its body and header timeouts).
      let peak = idle;
      for (const end = Date.now() + BODY_TIMEOUT_MS + 15_000; open() > 0 && Date.now() < end;) {
        peak = Math.max(peak, rssMb(pid));
        await new Promise((r) => setTimeout(r, 50));
      }
      const stillOpen = open();
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      clearInterval(drip);
      console.log(`receiver under ${CLIENTS} slow clients: paybatch watch RSS idle ${idle} MB, peak ${peak} MB (goal: under 150 MB); /healthz ${health.status}`);
      expect(health.status).toBe(200);
      expect(stillOpen, 'slow senders not cut off').toBe(0);
      expect(peak).toBeLessThan(150);
      const log = readFileSync(join(home, 'paybatch.log'), 'utf8').split('\n').filter((l) => l.includes('"event":"webhook_refused"'));
      expect(log.length).toBeLessThan(10);
    } finally {
      for (const s of sockets) s.destroy();
      child.kill('SIGTERM');
      await exited;
    }
  });
});
