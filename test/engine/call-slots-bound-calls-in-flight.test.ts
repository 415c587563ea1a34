/**
 * Hostile review of the call slots in the engine (c547e43): rows give their slot
 * back once their funding has answered. The real Pipeline, a real SQLite file,
 * the real sandbox over HTTP behind a lying, counting proxy. The store is the
 * real one; only its commit of a funding's answer is held (before the real
 * commitRow) until the test lets it go, so that rows that gave their slot back
 * linger in their last commit while the next rows run: that is the window the
 * change opened, held open by events, not for a time.
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
import { eventually } from '../helpers/daemon.js';
import { gate } from '../helpers/gates.js';
import type { LyingService } from '../helpers/lying-service.js';
import { PATHS, answer, delay, loseAnswerAfterCommit, lyingService, rule } from '../helpers/lying-service.js';

const ids = (n: number, prefix: string): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${String(i + 1).padStart(3, '0')}`);

/** The real store, each commit of a funding's answer (funded_at set) made once `hold` lets it go (`row`: "batch:line"). */
function heldFundedCommits(store: PipelineStore, hold: (row: string) => Promise<void>, onCommitted?: (line: number) => void): PipelineStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'commitRow') {
        return async (batchId: string, line: number, revision: number, patch: RowPatch) => {
          const funded = patch.changes.funded_at !== undefined && patch.changes.funded_at !== null;
          if (funded) await hold(`${batchId}:${line}`);
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

/**
 * Rows held in their last commit (heldFundedCommits) for as long as any other step can move on without them. Once every
 * step under way (Pipeline.workingRows) is a row held so (the window full of them, or nothing else left to run), the
 * oldest are let go, as many as there are call slots: the rows behind take their places and run while the others still
 * linger. A step passes to the next in microtasks (a commit's group waits a turn, inside its step), so the steps are
 * looked at every few ms, each look after a timer. `spans`: for each row held, how many calls the service had answered
 * (`answered`, the lying service's count) when it was held and when it was let go.
 */
class Lingering {
  readonly spans = new Map<string, { from: number; to: number }>();
  private readonly held = new Map<string, () => void>();
  private working: () => readonly string[] = () => [];

  constructor(private readonly slots: number, private readonly answered: () => number) {}

  /** The pipeline whose steps are looked at (made after its store, which holds the rows). */
  watch(pipeline: Pipeline): void {
    this.working = () => pipeline.workingRows();
  }

  readonly hold = (row: string): Promise<void> => new Promise((resolve) => {
    this.spans.set(row, { from: this.answered(), to: Infinity });
    this.held.set(row, resolve);
    if (this.held.size === 1) void this.letGoWhenStill();
  });

  /** The rows held while the service answered its call number `index` (from 0), in the order they were held. */
  heldThrough(index: number): string[] {
    return [...this.spans].filter(([, span]) => span.from <= index && index < span.to).map(([row]) => row);
  }

  private async letGoWhenStill(): Promise<void> {
    while (this.held.size > 0) {
      await sleep(2);
      if (this.working().some((row) => !this.held.has(row))) continue;
      for (const [row, letGo] of [...this.held].slice(0, this.slots)) {
        this.held.delete(row);
        (this.spans.get(row) as { to: number }).to = this.answered();
        letGo();
      }
    }
  }
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

/** A pipeline whose rows linger in their last commit while the others run (see Lingering). */
function lingeringPipeline(s: Setup): { pipeline: Pipeline; lingering: Lingering } {
  const lingering = new Lingering(s.config.engine.concurrency, () => s.liar.seen.length);
  const pipeline = pipelineOf(s, heldFundedCommits(s.ctx.store, lingering.hold));
  lingering.watch(pipeline);
  return { pipeline, lingering };
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
    const { pipeline, lingering } = lingeringPipeline(s);
    pipeline.setDeadline(Date.now() + 30_000);
    await pipeline.submit(batch);
    await pipeline.idle();
    expect(s.liar.maxInFlight).toBeLessThanOrEqual(2);
    // Most rows lingered while the service answered the next rows' calls: all but the last ones, and those whose
    // funding went unanswered (they kept their slot to find out, and lingered holding it, the others waiting).
    expect([...lingering.spans.values()].filter((span) => span.to > span.from).length).toBeGreaterThanOrEqual(8);
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
    // The first row's last commit is held until the test lets it go; the others' are made at once.
    const reached = gate();
    const letGo = gate();
    let held: string | null = null;
    const pipeline = pipelineOf(s, heldFundedCommits(s.ctx.store, async (row) => {
      if (held !== null) return;
      held = row;
      reached.open();
      await letGo.opened;
    }, (line) => committed.push(line)));
    pipeline.setDeadline(Date.now() + 30_000);
    const submitted = pipeline.submit(batch).catch((error: unknown) => error);
    await reached.opened;
    // Logged once its funding answered, before its commit: the row gave its slot back.
    const funded = s.events.find((e) => e.event === 'funded');
    expect(funded).toBeDefined();
    expect(held).toBe(`${batch}:${funded?.fields.line}`);
    const stopping = pipeline.stop(5_000);
    // Every other step ends (the next row finishes what it started, a row waiting for a slot ends without doing
    // anything): the row in its last commit is the only step left, and stop() has nothing else to wait for.
    await eventually(() => pipeline.workingRows().join() === held, 10_000, 'every step but the lingering row ended');
    // It is a step under way all the same: a stop given no time says so, and the stop under way waits for it.
    expect(await pipeline.stop(0)).toBe(false);
    expect(committed).not.toContain(funded?.fields.line);
    letGo.open();
    expect(await stopping).toBe(true);
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
    const { pipeline, lingering } = lingeringPipeline(s);
    pipeline.setDeadline(Date.now() + 30_000);
    const error = await pipeline.submit(batch).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationRefused);
    await pipeline.idle();
    const at = s.liar.seen.findIndex((x) => x.status === 401);
    expect(at).toBeGreaterThanOrEqual(0);
    // The refusal came while rows that had given their slots back lingered in their last commit.
    expect(lingering.heldThrough(at).length).toBeGreaterThan(0);
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
    const { pipeline, lingering } = lingeringPipeline(s);
    pipeline.setDeadline(Date.now() + 30_000);
    await pipeline.submit(batch);
    await pipeline.idle();
    const refused = s.liar.seen.findIndex((x) => x.method === 'POST' && PATHS.fund.test(x.path) && x.status === 422);
    expect(refused).toBeGreaterThanOrEqual(0);
    // The last row funded, its slot given back, lingered in its last commit while the next row was created and refused.
    const funded = s.events.filter((e) => e.event === 'funded').map((e) => `${batch}:${e.fields.line}`);
    expect(funded).toHaveLength(3);
    expect(lingering.heldThrough(refused)).toEqual(funded.slice(-1));
    expect(s.liar.seen.slice(refused + 1).filter((x) => x.method === 'POST' && PATHS.create.test(x.path))).toEqual([]);
    expect(BigInt(s.ctx.sandbox.store.balances().USD as string)).toBeGreaterThanOrEqual(0n);
    expect([...debitsPerTransaction(s.ctx.sandbox).values()].every((n) => n === 1)).toBe(true);
    expect(s.liar.maxInFlight).toBe(1);
  }, 30_000);
});
