/**
 * `npm run bench:sandbox`: create+fund pairs per second against the sandbox over
 * HTTP, faults and latency off, from a concurrent keep-alive client. The sandbox
 * runs as its own process (as `paybatch sandbox` would), so that client and
 * service each have a core of this machine.
 *
 *   BENCH_PAIRS (default 20000), BENCH_CONCURRENCY (default 32),
 *   BENCH_SANDBOX_NODE_ARGS (e.g. "--cpu-prof" to profile the sandbox process)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { authHeaders } from '../src/api/signing.js';
import { peakRssMb, startSandboxProcess } from './sandbox-process.js';

const GOAL_PAIRS_PER_SECOND = 2000;
const pairs = Number(process.env.BENCH_PAIRS ?? 20_000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);

const RECIPIENTS = [
  { type: 'bank', input: 'USD', output: 'GBP', recipient: { first_name: 'Alan', last_name: 'Turing', country_code: 'GBR', phone_number: '+447700900456', city: 'London', street: '1 Road', postal_code: 'MK3 6EB', sort_code: '089999', bank_account: '66374958', bank_account_type: 'current' } },
  { type: 'bank', input: 'EUR', output: 'EUR', recipient: { first_name: 'Emmy', last_name: 'Noether', country_code: 'DEU', phone_number: '+4915123456789', city: 'Berlin', street: 'Linden 1', postal_code: '10117', iban: 'DE89370400440532013000' } },
  { type: 'bank', input: 'USD', output: 'NGN', recipient: { first_name: 'Chinua', last_name: 'Achebe', country_code: 'NGA', phone_number: '+2348031234567', bank_name: 'GTBank', bank_code: '058', bank_account: '0123456789', bank_account_type: 'savings' } },
  { type: 'cash', input: 'USD', output: 'NGN', recipient: { first_name: 'Wole', last_name: 'Soyinka', country_code: 'NGA', phone_number: '+2348031234567' } },
] as const;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'paybatch-bench-'));
  const configFile = join(dir, 'sandbox.json');
  writeFileSync(configFile, JSON.stringify({ balances: { USD: '900000000000000000', EUR: '900000000000000000' } }));
  const nodeArgs = (process.env.BENCH_SANDBOX_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const sandbox = await startSandboxProcess(configFile, nodeArgs);
  const origin = new URL(sandbox.url).origin;
  const basePath = new URL(sandbox.url).pathname;
  const pool = new Pool(origin, { connections: concurrency, pipelining: 1 });
  const credentials = { apiKey: sandbox.key, apiSecret: sandbox.secret };
  let failures = 0;

  async function send(method: string, path: string, body: string): Promise<{ status: number; json: Record<string, unknown> }> {
    const url = `${sandbox.url}${path}`;
    const response = await pool.request({
      method: method as 'POST',
      path: `${basePath}${path}`,
      headers: { 'content-type': 'application/json', ...authHeaders(credentials, method, url, body) },
      body,
    });
    return { status: response.statusCode, json: (await response.body.json()) as Record<string, unknown> };
  }

  async function pair(n: number, run: string): Promise<void> {
    const corridor = RECIPIENTS[n % RECIPIENTS.length] as (typeof RECIPIENTS)[number];
    const body = JSON.stringify({
      external_id: `BENCH-${run}-${n}`, type: corridor.type, input_currency_code: corridor.input, output_currency_code: corridor.output,
      output_amount_in_cents: String(1000 + (n % 5000)),
      sender: { external_id: `S-${n % 500}`, type: 'person', first_name: 'Ada', last_name: 'Lovelace', birth_date: '1985-12-10', country_code: 'GBR', phone_number: '+447700900123' },
      recipient: corridor.recipient,
    });
    const created = await send('POST', '/transactions', body);
    if (created.status !== 201) {
      failures += 1;
      return;
    }
    const guard = JSON.stringify({ input_amount_in_cents: created.json.input_amount_in_cents, input_currency: created.json.input_currency });
    const funded = await send('POST', `/transactions/${String(created.json.id)}/fund`, guard);
    if (funded.status !== 200) failures += 1;
  }

  async function run(count: number, label: string): Promise<number> {
    let next = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < count) await pair(next++, label);
    }));
    return (performance.now() - started) / 1000;
  }

  try {
    await run(Math.min(1000, pairs), 'warmup');
    const seconds = await run(pairs, 'measured');
    const rate = pairs / seconds;
    console.log('bench:sandbox  create+fund pairs against the sandbox over HTTP (faults and latency off)');
    console.log(`  pairs              ${pairs} (concurrency ${concurrency}, failures ${failures})`);
    console.log(`  time               ${seconds.toFixed(2)} s`);
    console.log(`  pairs/s            ${rate.toFixed(0)}`);
    console.log(`  requests/s         ${(rate * 2).toFixed(0)}`);
    console.log(`  goal               ${GOAL_PAIRS_PER_SECOND} pairs/s`);
    console.log(`  ratio to goal      ${(rate / GOAL_PAIRS_PER_SECOND).toFixed(2)}`);
    console.log(`  sandbox peak RSS   ${peakRssMb(sandbox.pid)} MB`);
    if (failures > 0) process.exitCode = 1;
  } finally {
    await pool.close();
    sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
