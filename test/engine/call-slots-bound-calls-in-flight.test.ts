/**
 * Hostile review of the call slots in the engine (c547e43): rows give their slot
 * back once their funding has answered. The real Pipeline, a real SQLite file,
 * the real sandbox over HTTP behind a lying, counting proxy. The store is the
 * real one; only its commit of a funding's answer is made slow (a delay before
 * the real commitRow), so that rows that gave their slot back linger in their
 * last commit while the next rows run: that is the window the change opened.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthenticationRefused } from '../../src/api/errors.js';
import type { PayoutClient } from '../../src/api/client.js';
import { systemClock } from '../../src/clock.js';
import { configSchema } from '../../src/config/config.js';
import type { Config } from '../../src/config/config.js';
import { Pipeline } from '../../src/engine/pipeline.js';
import { takeInboxFile } from '../../src/engine/run.js';
import type { PipelineStore, RowPatch } from '../../src/store/port.js';
import type { EngineContext } from '../helpers/engine.js';
import { FAST_ENGINE, FAST_INTAKE, debitsPerTransaction, engineContext, gbrRowsBatch } from '../helpers/engine.js';
import type { LyingService } from '../helpers/lying-service.js';
import { PATHS, answer, delay, loseAnswerAfterCommit, lyingService, rule } from '../helpers/lying-service.js';

const ids = (n: number, prefix: string): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${String(i + 1).padStart(3, '0')}`);

/** The real store, its commit of a funding's answer (funded_at set) held `ms` first. */
function slowFundedCommits(store: PipelineStore, ms: number, onCommitted?: (line: number) => void): PipelineStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'commitRow') {
        return async (batchId: string, line: number, revision: number, patch: RowPatch) => {
          const funded = patch.changes.funded_at !== undefined && patch.changes.funded_at !== null;
          if (funded) await sleep(ms);
          const outcome = await target.commitRow(batchId, line, revision, patch);
          if (funded) onCommitted?.(line);
          return outcome;
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

interface Setup {
  ctx: EngineContext;
  liar: LyingService;
  client: PayoutClient;
  config: Config;
  events: { event: string; fields: Record<string, unknown> }[];
}

/** Takes the file in and releases its batch; returns its id. */
async function intake(s: Setup, file: string): Promise<string> {
  s.ctx.drop(file);
  const inbox = s.ctx.workspace.folders.inbox;
  const { readdirSync } = await import('node:fs');
  const name = readdirSync(inbox).find((n) => n.endsWith('.csv')) as string;
  for (let i = 0; i < 100; i++) {
    const outcome = await takeInboxFile(`${inbox}/${name}`, { workspace: s.ctx.workspace, store: s.ctx.store, config: s.config, clock: systemClock, log: () => {}, stableMs: 0 });
    if (outcome.kind === 'accepted') {
      await s.ctx.store.releaseBatch(outcome.batch);
      return outcome.batch;
    }
    if (outcome.kind !== 'waiting') throw new Error(`intake: ${outcome.kind}`);
    await sleep(40);
  }
  throw new Error('intake never accepted the file');
}

function pipelineOf(s: Setup, store: PipelineStore): Pipeline {
  return new Pipeline({
    store, client: s.client, clock: systemClock, engine: s.config.engine,
    log: (event, fields) => void s.events.push({ event, fields }),
  });
}

const creates = (liar: LyingService): number => liar.seen.filter((x) => x.method === 'POST' && PATHS.create.test(x.path)).length;

describe('call slots in the engine, hostile', () => {
  let s: Setup;
  const make = async (concurrency: number, sandbox: Parameters<typeof engineContext>[0] = {}): Promise<void> => {
    const ctx = await engineContext(sandbox);
    const liar = await lyingService(ctx.sandbox);
    ctx.serviceUrl = liar.url;
    const config = configSchema.parse({ intake: FAST_INTAKE, engine: { ...FAST_ENGINE, concurrency } });
    s = { ctx, liar, client: ctx.client(), config, events: [] };
  };
  beforeEach(() => {
    s = undefined as unknown as Setup;
  });
  afterEach(async () => {
    if (!s) return;
    await s.client.close();
    await s.liar.close();
    await s.ctx.stop();
  });

  it('never more calls in flight than engine.concurrency while released rows linger in their last commit, through 429s and lost answers; each row funded once', async () => {
    await make(2);
    const batch = await intake(s, gbrRowsBatch(s.ctx.dir, 'linger.csv', ids(16, 'LINGER')));
    s.liar.lie(rule('POST', PATHS.fund, loseAnswerAfterCommit(), 3));
    s.liar.lie(rule('POST', PATHS.fund, answer(429, { errors: ['slow down'] }, { 'retry-after': '0' }), 3));
    s.liar.lie({ match: { path: /^\/transactions/ }, act: delay(10) });
    const pipeline = pipelineOf(s, slowFundedCommits(s.ctx.store, 60));
    pipeline.setDeadline(Date.now() + 30_000);
    await pipeline.submit(batch);
    await pipeline.idle();
    expect(s.liar.maxInFlight).toBeLessThanOrEqual(2);
    const debits = debitsPerTransaction(s.ctx.sandbox);
    expect(debits.size).toBe(16);
    expect([...debits.values()].every((n) => n === 1)).toBe(true);
    const rows = await s.ctx.store.rowsInPhases(batch, ['ready', 'creating', 'created', 'funding', 'funded', 'final', 'held', 'cancelling'], 0, 100);
    expect(rows.filter((r) => r.phase === 'ready' || r.phase === 'creating' || r.phase === 'funding'), 'no row left mid-step').toEqual([]);
    expect(await pipeline.stop(1000)).toBe(true);
  }, 60_000);

  it('stop() waits for a row that gave its slot back and is still in its last commit', async () => {
    await make(1);
    const batch = await intake(s, gbrRowsBatch(s.ctx.dir, 'stop.csv', ids(4, 'STOP')));
    const committed: number[] = [];
    const pipeline = pipelineOf(s, slowFundedCommits(s.ctx.store, 400, (line) => committed.push(line)));
    pipeline.setDeadline(Date.now() + 30_000);
    const submitted = pipeline.submit(batch).catch((error: unknown) => error);
    for (let i = 0; i < 500 && !s.events.some((e) => e.event === 'funded'); i++) await sleep(5);
    const funded = s.events.find((e) => e.event === 'funded');
    expect(funded).toBeDefined();
    const stopped = await pipeline.stop(5_000);
    expect(stopped).toBe(true);
    // The row that had given its slot back finished its commit before stop() said all steps had ended.
    expect(committed).toContain(funded?.fields.line);
    const row = await s.ctx.store.row(batch, funded?.fields.line as number);
    expect(['funded', 'final']).toContain(row?.phase);
    await submitted;
    // Nothing half done: rows not started are ready, untouched; none left in creating or funding.
    const all = await s.ctx.store.rowsInPhases(batch, ['ready', 'creating', 'created', 'funding', 'funded', 'final', 'held', 'cancelling'], 0, 100);
    expect(all.filter((r) => r.phase === 'creating' || r.phase === 'funding')).toEqual([]);
    expect([...debitsPerTransaction(s.ctx.sandbox).values()].every((n) => n === 1)).toBe(true);
  }, 30_000);

  it.each([1, 2])('refused credentials on a create (concurrency %i): no create goes out afterwards from a row that was still waiting for a slot', async (concurrency) => {
    await make(concurrency);
    const list = ids(14, 'AUTH');
    const batch = await intake(s, gbrRowsBatch(s.ctx.dir, 'auth.csv', list));
    const refusedId = list[6] as string;
    s.liar.lie({ match: { method: 'POST', path: PATHS.create, body: (b) => (b as { external_id?: string } | undefined)?.external_id === refusedId }, act: answer(401, { errors: ['credentials refused'] }) });
    s.liar.lie({ match: { path: /^\/transactions/ }, act: delay(8) });
    const pipeline = pipelineOf(s, slowFundedCommits(s.ctx.store, 40));
    pipeline.setDeadline(Date.now() + 30_000);
    const error = await pipeline.submit(batch).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationRefused);
    await pipeline.idle();
    const at = s.liar.seen.findIndex((x) => x.status === 401);
    expect(at).toBeGreaterThanOrEqual(0);
    const after = s.liar.seen.slice(at + 1).filter((x) => x.method === 'POST' && PATHS.create.test(x.path)).length;
    // At most the other slot's row, started before the refusal, may still create.
    expect(after).toBeLessThanOrEqual(concurrency - 1);
    expect(creates(s.liar)).toBeLessThanOrEqual(7 + concurrency - 1);
    expect(s.liar.maxInFlight).toBeLessThanOrEqual(concurrency);
  }, 30_000);

  it('a funding refused for lack of balance stops the currency before the next row is created (rows giving their slots back before it)', async () => {
    // GBR-2026-0001 costs about 1,580 USD: three fit in 5,000 USD, the fourth is refused.
    await make(1, { balances: { USD: '500000' } });
    const batch = await intake(s, gbrRowsBatch(s.ctx.dir, 'balance.csv', ids(9, 'BAL')));
    s.liar.lie({ match: { path: /^\/transactions/ }, act: delay(5) });
    const pipeline = pipelineOf(s, slowFundedCommits(s.ctx.store, 30));
    pipeline.setDeadline(Date.now() + 30_000);
    await pipeline.submit(batch);
    await pipeline.idle();
    const refused = s.liar.seen.findIndex((x) => x.method === 'POST' && PATHS.fund.test(x.path) && x.status === 422);
    expect(refused).toBeGreaterThanOrEqual(0);
    expect(s.liar.seen.slice(refused + 1).filter((x) => x.method === 'POST' && PATHS.create.test(x.path))).toEqual([]);
    expect(BigInt(s.ctx.sandbox.store.balances().USD as string)).toBeGreaterThanOrEqual(0n);
    expect([...debitsPerTransaction(s.ctx.sandbox).values()].every((n) => n === 1)).toBe(true);
    expect(s.liar.maxInFlight).toBe(1);
  }, 30_000);
});
