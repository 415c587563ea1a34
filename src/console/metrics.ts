/**
 * /metrics in the Prometheus text format (prom-client), on a registry of its
 * own: several daemons in one process (tests) never share a series.
 *
 * Two kinds of figures. Events are counted as they happen, from the engine's
 * log (metrics-log.ts), the client's call observer and the webhook receiver:
 * they live in memory and start at zero with the process, as Prometheus
 * counters do. States are read from the store at each scrape (one query, see
 * store/metrics-figures.ts), so they are true after a restart and whichever
 * worker did the work.
 *
 * Every label value comes from a short fixed list (a route template, a state,
 * a currency code): never an id, an external id or an account number.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CallOutcome, Endpoint } from '../api/calls.js';
import type { Clock } from '../clock.js';
import { FINAL_STATES, PHASES } from '../payout-states.js';
import type { MetricsFigures, MetricsStore } from '../store/port.js';

export interface MetricsOptions {
  store: MetricsStore;
  clock: Clock;
  /** Node's own process metrics (CPU, memory, event loop, handles), switched on at the first scrape. */
  processMetrics?: boolean;
}

/** Rows held are counted while their batch is open or received within this window, as `paybatch status` shows batches. */
export const RECENT_MS = 7 * 24 * 3_600_000;

const SOURCES: ReadonlySet<string> = new Set(['webhook', 'polling', 'answer']);
const ASKED: ReadonlySet<string> = new Set(['create', 'lookup', 'read', 'resolve', 'fund', 'cancel', 'webhook']);

/** A label value from a known list, else `other`: a lying service cannot make up series. */
const known = (value: unknown, allowed: ReadonlySet<string> | readonly string[]): string =>
  typeof value === 'string' && (allowed instanceof Set ? allowed.has(value) : (allowed as readonly string[]).includes(value)) ? value : 'other';

const CALL_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const READS = [0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500];

export class Metrics {
  readonly registry = new Registry();
  private readonly calls: Counter<'endpoint' | 'outcome'>;
  private readonly callSeconds: Histogram<'endpoint'>;
  private readonly learned: Counter<'state' | 'source'>;
  private readonly reads: Histogram;
  private readonly balance: Counter<'currency'>;
  private readonly mismatches: Counter<'asked_in'>;
  private readonly deliveries: Counter<'outcome' | 'reason'>;
  private readonly settled: Counter;
  private processMetricsOn = false;
  /** The figures of the scrape under way: every gauge of one scrape shares one read of the store. */
  private reading: Promise<{ figures: MetricsFigures; now: number }> | null = null;

  constructor(private readonly options: MetricsOptions) {
    const registers = [this.registry];
    this.calls = new Counter({ name: 'paybatch_service_calls_total', help: 'HTTP requests to the payout service (retries included), by endpoint (route template) and outcome', labelNames: ['endpoint', 'outcome'], registers });
    this.callSeconds = new Histogram({ name: 'paybatch_service_call_duration_seconds', help: 'How long each HTTP request to the payout service took, by endpoint', labelNames: ['endpoint'], buckets: CALL_SECONDS, registers });
    this.learned = new Counter({ name: 'paybatch_final_states_learned_total', help: 'Rows that reached a final state, by state and by how paybatch learned it (webhook, polling, or the answer to its own call)', labelNames: ['state', 'source'], registers });
    this.reads = new Histogram({ name: 'paybatch_reads_per_transaction', help: 'Reads of a transaction (polling) until it was final, observed when it became final', buckets: READS, registers });
    this.balance = new Counter({ name: 'paybatch_balance_exhausted_total', help: 'Times the balance of a currency ran out (funding refused for lack of balance)', labelNames: ['currency'], registers });
    this.mismatches = new Counter({ name: 'paybatch_answer_mismatches_total', help: 'Answers that did not match what was asked (the row is held for a person), by what was asked', labelNames: ['asked_in'], registers });
    this.deliveries = new Counter({ name: 'paybatch_webhook_deliveries_total', help: 'Webhook deliveries accepted (stored) or refused, by reason', labelNames: ['outcome', 'reason'], registers });
    this.settled = new Counter({ name: 'paybatch_batches_settled_total', help: 'Batches settled (every row final or ended) by this process', registers });
    // Series known in advance start at zero, so that rate() and increase() see their first event.
    for (const state of FINAL_STATES) for (const source of SOURCES) this.learned.inc({ state, source }, 0);
    for (const asked of ASKED) this.mismatches.inc({ asked_in: asked }, 0);
    this.deliveries.inc({ outcome: 'accepted', reason: 'stored' }, 0);
    this.gauges();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The text Prometheus scrapes. Rejects when the store does not answer. */
  async scrape(): Promise<string> {
    if (this.options.processMetrics && !this.processMetricsOn) {
      this.processMetricsOn = true;
      collectDefaultMetrics({ register: this.registry });
    }
    return this.registry.metrics();
  }

  // ---- events (see metrics-log.ts for the ones read from the engine's log)

  /** One HTTP request to the service: the client's call observer (PayoutClient.observeCalls). */
  call(endpoint: Endpoint, outcome: CallOutcome, seconds: number): void {
    this.calls.inc({ endpoint, outcome });
    this.callSeconds.observe({ endpoint }, seconds);
  }

  webhookDelivery(outcome: 'accepted' | 'refused', reason: string): void {
    this.deliveries.inc({ outcome, reason });
  }

  /** A row became final: its state, how it was learned, and the reads it took. */
  finalState(state: unknown, source: unknown, reads: unknown): void {
    this.learned.inc({ state: known(state, FINAL_STATES), source: known(source, SOURCES) });
    if (typeof reads === 'number' && Number.isFinite(reads) && reads >= 0) this.reads.observe(reads);
  }

  balanceExhausted(currency: unknown): void {
    this.balance.inc({ currency: typeof currency === 'string' && /^[A-Z]{3}$/.test(currency) ? currency : 'other' });
  }

  answerMismatch(askedIn: unknown): void {
    this.mismatches.inc({ asked_in: known(askedIn, ASKED) });
  }

  batchSettled(): void {
    this.settled.inc();
  }

  // ---- states, read at each scrape

  private figures(): Promise<{ figures: MetricsFigures; now: number }> {
    this.reading ??= (async () => {
      const now = this.options.clock.now();
      return { figures: await this.options.store.metricsFigures(new Date(now - RECENT_MS).toISOString()), now };
    })().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private gauges(): void {
    const registers = [this.registry];
    const figures = (): Promise<{ figures: MetricsFigures; now: number }> => this.figures();
    const age = (at: string | null, now: number): number => {
      const then = at === null ? NaN : Date.parse(at);
      return Number.isNaN(then) ? 0 : Math.max(0, (now - then) / 1000);
    };
    new Gauge({
      name: 'paybatch_rows', help: 'Rows of open batches (in intake or accepted), by phase', labelNames: ['phase'], registers,
      async collect() {
        const { figures: f } = await figures();
        this.reset();
        for (const phase of new Set([...PHASES, ...Object.keys(f.rows_by_phase)])) this.set({ phase }, f.rows_by_phase[phase] ?? 0);
      },
    });
    new Gauge({
      name: 'paybatch_rows_final', help: "Rows of open batches in phase final, by the service's state (or paybatch's reason when it ended the row itself)", labelNames: ['state'], registers,
      async collect() {
        const { figures: f } = await figures();
        this.reset();
        for (const state of new Set([...FINAL_STATES, ...Object.keys(f.final_by_state)])) this.set({ state }, f.final_by_state[state] ?? 0);
      },
    });
    new Gauge({
      name: 'paybatch_batches_awaiting_approval', help: 'Open batches waiting for approval', registers,
      async collect() {
        this.set((await figures()).figures.awaiting_approval);
      },
    });
    new Gauge({
      name: 'paybatch_batch_awaiting_approval_oldest_seconds', help: 'How long the oldest batch waiting for approval has waited since it was received (0 when none waits)', registers,
      async collect() {
        const { figures: f, now } = await figures();
        this.set(age(f.oldest_awaiting_at, now));
      },
    });
    new Gauge({
      name: 'paybatch_rows_attention', help: 'Rows a person should look at: in an attention state (manual, error, stuck, exception) or held (an answer that did not match)', registers,
      async collect() {
        this.set((await figures()).figures.attention);
      },
    });
    new Gauge({
      name: 'paybatch_rows_attention_oldest_seconds', help: "Age of the oldest row needing attention, from its last observed change (0 when none)", registers,
      async collect() {
        const { figures: f, now } = await figures();
        this.set(age(f.oldest_attention_at, now));
      },
    });
  }
}
