/**
 * The pure decision (src/engine/decide.ts) against a service that lies: thousands
 * of generated observations (wrong or swapped ids, another row's external_id,
 * amounts one minor unit off, as numbers, beyond 2^53, negative or fractional,
 * other or case-changed currencies, states the spec does not know, regressions,
 * equal / older / missing / garbled / far-future updated_at, the same instant in
 * other time zones) from every source (create, lookup, read, resolve, fund,
 * cancel, webhook), thrown at realistic stored rows in every phase. Every
 * observation goes through parseTransaction first, as the client and the
 * webhook applier do. For each case the returned patch and action are compared
 * with the row against the product's promises:
 *
 *   (1) an answer that is not what was asked is never acted on: the row is held;
 *   (2) an older observation never moves a row;
 *   (3) a final state never moves back;
 *   (4) a row is funded at most once, only from 'approved', only if its quote
 *       passes the guard (max_input_per_row, the batch's allowance), before the
 *       funding deadline;
 *   (5) money is exact (integer minor-unit strings, bigint);
 *   (6) a 200 to paybatch's own funding call is proof of funding;
 *   (7) a cancellation decided earlier is sent again only for a row still
 *       cancelling, from a current observation of a transaction the service
 *       may still cancel, no sooner than one first polling interval after the
 *       last, at most the policy's number of times in all, then given up once.
 *
 * The oracle is written from the spec (states [3.1], D8, D10) rather than copied
 * from the code: times are compared as instants (Date.parse), not as strings.
 * The defects this found (A to D, then E to G) are fixed; their minimal cases stay at the
 * end of the file. Deterministic (fixed seeds), pure, no I/O.
 */
import { describe, expect, it } from 'vitest';
import type { ServiceTransaction } from '../../src/api/answers.js';
import { parseTransaction } from '../../src/api/answers.js';
import type { PayoutRequest } from '../../src/api/payout-request.js';
import { toPayoutRequest } from '../../src/batch/payout-request.js';
import type { Mismatch } from '../../src/engine/answer-check.js';
import { checkAnswer, lookupHit } from '../../src/engine/answer-check.js';
import type { Asked, Decision, Policy } from '../../src/engine/decide.js';
import { MAX_CLOCK_SKEW_MS, decide, hold } from '../../src/engine/decide.js';
import type { PollingPolicy } from '../../src/engine/read-schedule.js';
import { firstInterval, nextReadAt } from '../../src/engine/read-schedule.js';
import type { PipelineRow } from '../../src/store/port.js';
import type { Phase, TxState } from '../../src/payout-states.js';
import type { RowCorridor } from '../helpers/rows.js';
import { validRow } from '../helpers/rows.js';
import { propertyRuns } from '../helpers/depth.js';

// ---------------------------------------------------------------------------
// A small seeded PRNG (mulberry32) and helpers.

class Gen {
  private a: number;
  constructor(seed: number) {
    this.a = seed >>> 0;
  }
  next(): number {
    this.a = (this.a + 0x6d2b79f5) >>> 0;
    let t = this.a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
}

// ---------------------------------------------------------------------------
// The world: a fixed clock, the engine's default policy.

const NOW = Date.parse('2026-11-21T12:00:00.000Z');
const MIN = 60_000;
const iso = (ms: number): string => new Date(ms).toISOString();
const POLLING: PollingPolicy = { first_window_ms: 3_600_000, first_window_reads: 6, later_interval_ms: 3_600_000, reads_per_second: 5 };
const DEADLINE_MS = 50 * MIN;
const FUND_ATTEMPTS = 3;
const CANCEL_SENDS = 3;
const TWO_53 = 2n ** 53n;
const MAX_18 = 999_999_999_999_999_999n;

type Allowance = bigint | null | 'held';

function policyOf(maxInputPerRow: Record<string, string>, allowance: Allowance, calls?: string[]): Policy {
  return {
    maxInputPerRow,
    allowance: (batchId, currency) => {
      calls?.push(`${batchId}/${currency}`);
      return allowance;
    },
    unapprovedRow: () => null,
    fundingDeadlineMs: DEADLINE_MS,
    polling: POLLING,
    fundAttempts: FUND_ATTEMPTS,
  };
}

// The spec's vocabulary [3.1], written here again so the oracle does not lean on the code under test.
const KNOWN_STATES = ['initial', 'verified', 'approved', 'pending', 'mispaid', 'received', 'processing', 'manual', 'paid', 'canceled', 'refunded', 'exception', 'error', 'stuck'] as const;
const SPEC_FUNDED = new Set(['pending', 'mispaid', 'received', 'processing', 'paid', 'manual', 'error', 'exception', 'stuck', 'refunded']);
/** States the service still accepts a cancellation in (may_cancel) [3.1], [D11]: before payout, or stopped in error. */
const SPEC_CANCELLABLE = new Set(['initial', 'verified', 'approved', 'pending', 'received', 'error', 'manual', 'exception']);
const UNKNOWN_STATES = ['funded', 'paid_out', 'Paid', 'PAID', 'cancelled', 'approved ', '', 'settled', 'expired'];
/** The order the spec's flow implies [3.1], [3.2], for observations made at the same instant. */
const SPEC_ORDER: Record<string, number> = {
  initial: 0, verified: 1, approved: 2, pending: 3, mispaid: 4, received: 4, processing: 5, error: 6, manual: 6, exception: 6, stuck: 6, canceled: 7, paid: 8, refunded: 8,
};
const ALL_ASKED: readonly Asked[] = ['create', 'lookup', 'read', 'resolve', 'fund', 'cancel', 'webhook'];
const SOURCE: Record<Asked, string> = { create: 'answer', fund: 'answer', cancel: 'answer', lookup: 'polling', read: 'polling', resolve: 'polling', webhook: 'webhook' };
const IN_FLIGHT = new Set(['creating', 'created', 'funding', 'funded', 'cancelling']);
const NOT_IN_FLIGHT_PHASES: Phase[] = ['ready', 'not_sent', 'invalid', 'refused', 'checking', 'held'];
/** Where a decision may take a row from each phase in flight. */
const NEXT_PHASES: Record<string, readonly string[]> = {
  creating: ['created', 'funding', 'funded', 'final', 'cancelling', 'held'],
  created: ['created', 'funding', 'funded', 'final', 'cancelling', 'held'],
  funding: ['funding', 'funded', 'created', 'final', 'cancelling', 'held'],
  funded: ['funded', 'final', 'held'],
  cancelling: ['cancelling', 'final', 'held'],
};
const specFinal = (state: string | null | undefined, funded: boolean): boolean =>
  state === 'paid' || state === 'refunded' || (state === 'canceled' && !funded);
const DIGITS = /^\d+$/;

// ---------------------------------------------------------------------------
// Rows as the store holds them.

const CORRIDORS: readonly RowCorridor[] = ['gbr', 'eur', 'global', 'ngaBank', 'ngaCash'];
const OUTPUT_AMOUNTS = [1n, 99n, 100n, 10_000n, 123_456_789n, TWO_53 - 1n, TWO_53, TWO_53 + 1n, 999_999_999_999_999_999n];
const LIMITS = ['150000', '9007199254740992', '999999999999999999', '1'];

function requestOf(corridor: RowCorridor, externalId: string, amount: bigint): PayoutRequest {
  return toPayoutRequest(validRow(corridor, { external_id: externalId }), amount);
}

/** A quote around the limit: just under, at, just over, far under, beyond 2^53. */
function quoteNear(g: Gen, limit: string | undefined): string {
  const l = BigInt(limit ?? '150000');
  const choices = [l - 1n, l, l + 1n, 1n, 57_391n, TWO_53 + 1n, 0n];
  const q = g.pick(choices);
  // The service's amounts are at most 18 digits [D8] (as max_input_per_row's): a quote is never beyond.
  return (q < 0n ? 0n : q > MAX_18 ? MAX_18 : q).toString();
}

interface Scenario {
  row: PipelineRow;
  limits: Record<string, string>;
  allowance: Allowance;
}

function makeScenario(g: Gen, phase: Phase): Scenario {
  const line = g.int(1, 9999);
  const externalId = `PB-2026-${String(line).padStart(5, '0')}`;
  const corridor = g.pick(CORRIDORS);
  const request = requestOf(corridor, externalId, g.pick(OUTPUT_AMOUNTS));
  const currency = request.input_currency_code;
  const limits: Record<string, string> = {};
  if (g.chance(0.85)) limits[currency] = g.pick(LIMITS);
  if (g.chance(0.5)) limits[currency === 'USD' ? 'EUR' : 'USD'] = g.pick(LIMITS);
  const quote = quoteNear(g, limits[currency]);
  const allowance: Allowance = g.chance(0.4) ? null : g.chance(0.15) ? 'held' : BigInt(quote) + BigInt(g.int(-1, 1)) * 1000n;
  const createdMs = NOW - g.int(0, 70 * MIN);
  const observedMs = g.chance(0.8) ? g.int(createdMs, NOW) : null;
  const base: PipelineRow = {
    batch_id: `batch-${g.int(1, 3)}`,
    line,
    external_id: externalId,
    request,
    phase,
    outcome: null,
    outcome_detail: null,
    transaction_id: `tx-${line}`,
    state: 'initial',
    state_reason: null,
    state_reason_code: null,
    input_amount: quote,
    input_currency: currency,
    output_amount: request.output_amount_in_cents,
    output_currency: request.output_currency_code,
    refunded_amount: null,
    created_at: iso(createdMs),
    funded_at: null,
    paid_at: null,
    refunded_at: null,
    settled_at: null,
    observed_at: observedMs === null ? null : iso(observedMs),
    heard_at: iso(observedMs ?? createdMs),
    reads: g.int(0, 9),
    next_read_at: NOW + g.int(0, 60) * MIN,
    fund_attempts: 0,
    revision: g.int(1, 40),
  };
  const fundedAt = (): string => iso(g.int(createdMs, NOW));
  switch (phase) {
    case 'creating':
      // created_at: when paybatch asked (null on rows claimed by an older paybatch).
      Object.assign(base, { transaction_id: null, state: null, input_amount: null, input_currency: null, output_amount: null, output_currency: null, created_at: g.chance(0.2) ? null : iso(NOW - g.int(0, 90) * MIN), observed_at: null, heard_at: null, reads: 0, next_read_at: null });
      break;
    case 'created': {
      const state = g.pick(['initial', 'verified', 'approved']);
      // 'approved' in created: its funding attempts ran out with the outcome unknown; the next read tries again.
      Object.assign(base, { state, fund_attempts: state === 'approved' ? FUND_ATTEMPTS : 0 });
      break;
    }
    case 'funding':
      // 'canceled' in funding: a webhook said so while the funding call was out (decide stores it and keeps the phase).
      Object.assign(base, { state: g.chance(0.85) ? 'approved' : 'canceled', fund_attempts: g.int(1, FUND_ATTEMPTS), next_read_at: null });
      break;
    case 'funded':
      Object.assign(base, { state: g.pick(['pending', 'received', 'processing', 'manual', 'error', 'stuck', 'exception', 'mispaid', 'canceled', 'approved']), funded_at: fundedAt(), fund_attempts: g.int(1, FUND_ATTEMPTS) });
      break;
    case 'cancelling': {
      // Some funded: a funding refused that the service made all the same, or a cancellation a person asked for.
      const funded = g.chance(0.3);
      const state = funded ? g.pick(['pending', 'received', 'error', 'manual', 'exception', 'processing']) : g.pick(['initial', 'verified', 'approved']);
      // Cancellations sent so far, the last some minutes ago (or not recorded: a row stored before they were counted).
      const sends = g.int(0, CANCEL_SENDS + 1);
      const sentAt = sends === 0 || g.chance(0.1) ? null : iso(NOW - g.int(0, 2 * firstInterval(POLLING) / MIN) * MIN);
      // Some accepted by the service (answered 202): it carries them out on its own, however long it takes.
      const acceptedAt = sends > 0 && g.chance(0.2) ? iso(NOW - g.int(0, 4 * firstInterval(POLLING) / MIN) * MIN) : null;
      Object.assign(base, {
        state, funded_at: funded ? fundedAt() : null, fund_attempts: funded ? 1 : 0, cancels_sent: sends, cancel_sent_at: sentAt, cancel_accepted_at: acceptedAt,
        outcome: g.pick(['quote_rejected', 'over_budget', 'funding_deadline', 'sender_not_approved', 'cancelled_on_request', 'fund_refused']), outcome_detail: 'why',
      });
      break;
    }
    case 'final': {
      const state = g.pick(['paid', 'refunded', 'canceled']);
      const funded = state !== 'canceled';
      Object.assign(base, { state, funded_at: funded ? fundedAt() : null, settled_at: iso(NOW - MIN), paid_at: state === 'paid' ? iso(NOW - MIN) : null, next_read_at: null });
      break;
    }
    case 'held': {
      // Some held while their funding call was out: its 200 may still come back.
      const fundAttempts = g.chance(0.5) ? g.int(1, FUND_ATTEMPTS) : 0;
      Object.assign(base, { state: g.pick([...KNOWN_STATES]), outcome: 'answer_mismatch', next_read_at: null, fund_attempts: fundAttempts, funded_at: fundAttempts > 0 && g.chance(0.5) ? fundedAt() : null });
      break;
    }
      break;
    default:
      Object.assign(base, { transaction_id: null, state: null, input_amount: null, input_currency: null, output_amount: null, output_currency: null, created_at: null, observed_at: null, heard_at: null, next_read_at: null });
  }
  return { row: base, limits, allowance };
}

// ---------------------------------------------------------------------------
// Observations: the truth about the row's transaction, then lies.

type Field = 'id' | 'external_id' | 'output_amount' | 'output_currency' | 'input_currency' | 'input_amount';

interface Observation {
  raw: Record<string, unknown>;
  /** Fields that say something else than the row (a semantic lie). */
  lies: Set<Field>;
  /** Fields that say the same value in an unusual spelling (leading zeros): a hold is allowed, not required. */
  odd: Set<Field>;
  /** What the updated_at was meant to be, for the report of a failing case. */
  timeKind: string;
}

/** An amount as the service might put it: the same value (string, number when exact), or a lie. */
function amountVariant(g: Gen, value: bigint, lieRate: number): { v: unknown; absent?: boolean } {
  if (g.chance(lieRate)) {
    const lie = g.pick(['plus1', 'minus1', 'negative', 'decimal', 'exp', 'space', 'absent', 'null', 'times100', 'nineteen', 'float', 'unsafeNumber', 'other'] as const);
    switch (lie) {
      case 'plus1': return { v: (value + 1n).toString() };
      case 'minus1': return { v: (value - 1n).toString() };
      case 'negative': return { v: `-${value}` };
      case 'decimal': return { v: `${value}.00` };
      case 'exp': return { v: `${value}e0` };
      case 'space': return { v: ` ${value}` };
      case 'absent': return { v: undefined, absent: true };
      case 'null': return { v: null };
      case 'times100': return { v: (value * 100n + 1n).toString() };
      case 'nineteen': return { v: `${value}${'0'.repeat(19)}` };
      case 'float': return { v: Number(value) + 0.5 };
      // A number beyond 2^53 cannot carry the amount exactly: a client that took it would round.
      case 'unsafeNumber': return { v: Number(TWO_53 + value) };
      case 'other': return { v: g.pick(['0', '1', '100', '9007199254740993'].filter((o) => o !== value.toString())) };
    }
  }
  const shape = g.int(0, 9);
  if (shape <= 5) return { v: value.toString() };
  if (shape <= 8) {
    // A JSON number: exact only up to 2^53 - 1; beyond, it says another amount (and the parser refuses it).
    return { v: Number(value) };
  }
  return { v: `0${value}` };
}

/**
 * What an amount in an answer says about `wanted`, read independently of the parser:
 * the same amount ('same'), the same amount in an odd spelling (leading zeros: 'odd'),
 * or something else ('lie': another value, a fraction, a sign, a number beyond 2^53
 * that cannot be exact, more than 18 digits [D8], absent).
 */
function amountSays(v: unknown, wanted: bigint): 'same' | 'odd' | 'lie' {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 && BigInt(v) === wanted ? 'same' : 'lie';
  if (typeof v !== 'string' || !/^\d{1,18}$/.test(v) || BigInt(v) !== wanted) return 'lie';
  return v === wanted.toString() ? 'same' : 'odd';
}

function currencyVariant(g: Gen, code: string, lieRate: number): { v: unknown; lie: boolean } {
  if (g.chance(lieRate)) {
    const others = ['USD', 'EUR', 'GBP', 'NGN', 'JPY', 'KWD'].filter((c) => c !== code);
    return { v: g.pick([...others, code.toLowerCase(), `${code} `, code.charAt(0) + code.slice(1).toLowerCase(), null, 840]), lie: true };
  }
  return { v: code, lie: false };
}

/** The instant `ms` written in one of the ways a service could write it (all UTC-equivalent). */
function spell(g: Gen, ms: number): string {
  const kind = g.int(0, 7);
  const shifted = (offsetMin: number): string => {
    const sign = offsetMin >= 0 ? '+' : '-';
    const abs = Math.abs(offsetMin);
    return `${iso(ms + offsetMin * MIN).slice(0, 23)}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  };
  switch (kind) {
    case 0: return iso(ms);
    case 1: return shifted(120);
    case 2: return shifted(-330);
    case 3: return shifted(0);
    case 4: return iso(ms).toLowerCase();
    case 5: return `${iso(ms).slice(0, 23)}${g.int(0, 999).toString().padStart(3, '0')}Z`; // microseconds: truncated to the same ms
    case 6: return ms % 1000 === 0 ? new Date(ms).toUTCString() : iso(ms);
    default: return shifted(g.pick([60, -60, 345, 840, -720]));
  }
}

function makeObservation(g: Gen, row: PipelineRow, asked: Asked): Observation {
  const lies = new Set<Field>();
  const odd = new Set<Field>();
  const lieRate = g.chance(0.45) ? 0 : 0.12;
  const raw: Record<string, unknown> = { type: row.request.type, may_cancel: g.chance(0.5) };

  // id
  const ownId = row.transaction_id ?? `tx-${row.line}`;
  if (g.chance(lieRate)) {
    raw.id = g.pick([`tx-${row.line + 1}`, ownId.toUpperCase(), `${ownId} `, `tx-0${row.line}`]);
    if (row.transaction_id !== null && row.phase !== 'creating') lies.add('id');
  } else {
    raw.id = ownId;
  }
  // external_id
  if (g.chance(lieRate)) {
    raw.external_id = g.pick([`PB-2026-${String(row.line + 1).padStart(5, '0')}`, row.external_id.toLowerCase(), `${row.external_id} `, `${row.external_id}-1`]);
    lies.add('external_id');
  } else {
    raw.external_id = row.external_id;
  }
  // output amount and currency
  const out = amountVariant(g, BigInt(row.request.output_amount_in_cents), lieRate);
  if (!out.absent) raw.output_amount_in_cents = out.v;
  const outSays = amountSays(raw.output_amount_in_cents, BigInt(row.request.output_amount_in_cents));
  if (outSays === 'lie') lies.add('output_amount');
  if (outSays === 'odd') odd.add('output_amount');
  const outCur = currencyVariant(g, row.request.output_currency_code, lieRate);
  raw[g.chance(0.2) ? 'output_currency_code' : 'output_currency'] = outCur.v;
  if (outCur.lie) lies.add('output_currency');
  const inCur = currencyVariant(g, row.request.input_currency_code, lieRate);
  if (!(inCur.lie && g.chance(0.2))) raw[g.chance(0.2) ? 'input_currency_code' : 'input_currency'] = inCur.v;
  if (inCur.lie) lies.add('input_currency');

  // state
  const roll = g.next();
  const plausible: Record<string, readonly string[]> = {
    creating: ['initial', 'verified', 'approved', 'canceled'],
    created: ['approved', 'initial', 'verified', 'canceled', 'pending'],
    funding: ['approved', 'pending', 'processing', 'canceled', 'refunded', 'received'],
    funded: ['processing', 'paid', 'error', 'manual', 'canceled', 'refunded', 'pending', 'approved'],
    cancelling: ['canceled', 'approved', 'initial', 'refunded', 'error', 'pending'],
    final: ['processing', 'pending', 'approved', 'paid', 'canceled', 'refunded'],
  };
  const state = roll < 0.2 && row.state !== null ? row.state
    : roll < 0.65 ? g.pick(plausible[row.phase] ?? KNOWN_STATES)
      : roll < 0.9 ? g.pick(KNOWN_STATES)
        : g.pick(UNKNOWN_STATES);
  raw.state = state;
  if (g.chance(0.3)) raw.state_reason = g.pick(['recipient account 12345678 closed', 'provider timeout', null]);
  if (g.chance(0.3)) raw.state_reason_details = { code: g.pick(['recipient_phone_number_invalid', 'provider_error']) };
  if (SPEC_FUNDED.has(state) && g.chance(0.3)) raw.funded_at = iso(NOW - g.int(1, 30) * MIN);
  if (state === 'refunded' && g.chance(0.5)) raw.refunded_amount_in_cents = g.pick(['1', String(row.input_amount ?? '5')]);

  // input amount: the funded amount once committed, else a quote (the stored one or a new one)
  const stored = row.input_amount ?? quoteNear(g, undefined);
  const quote = g.chance(0.6) ? BigInt(stored) : BigInt(quoteNear(g, String(BigInt(stored) + 1n)));
  const inAmt = amountVariant(g, quote, lieRate);
  if (!inAmt.absent) raw.input_amount_in_cents = inAmt.v;
  const committed = row.funded_at !== null || (row.phase === 'funding' && (asked === 'fund' || SPEC_FUNDED.has(state) || (raw.funded_at !== undefined && raw.funded_at !== null)));
  if (committed && row.input_amount !== null) {
    const inSays = amountSays(raw.input_amount_in_cents, BigInt(row.input_amount));
    if (inSays === 'lie') lies.add('input_amount');
    if (inSays === 'odd') odd.add('input_amount');
  }

  // updated_at
  const storedMs = row.observed_at === null ? null : Date.parse(row.observed_at);
  const base = storedMs ?? NOW - g.int(0, 30 * MIN);
  const timeKind = g.pick(['newer', 'newer', 'equal', 'equal', 'older', 'older', 'missing', 'null', 'garbled', 'future', 'boundary', 'nearFuture'] as const);
  switch (timeKind) {
    case 'newer': raw.updated_at = spell(g, Math.min(base + g.int(1, 20 * MIN), NOW + MAX_CLOCK_SKEW_MS)); break;
    case 'equal': raw.updated_at = spell(g, base); break;
    case 'older': raw.updated_at = spell(g, base - g.int(1, 20 * MIN)); break;
    case 'missing': break;
    case 'null': raw.updated_at = null; break;
    case 'garbled': raw.updated_at = g.pick(['yesterday', '2026-13-45T99:00:00Z', '', '20261121T100000Z', base, String(base)]); break;
    case 'future': raw.updated_at = spell(g, NOW + MAX_CLOCK_SKEW_MS + g.int(1, 24 * 60 * MIN)); break;
    case 'boundary': raw.updated_at = iso(NOW + MAX_CLOCK_SKEW_MS); break;
    case 'nearFuture': raw.updated_at = spell(g, NOW + g.int(0, MAX_CLOCK_SKEW_MS)); break;
  }
  // A transaction found by lookup may be older than the lookup (a crash, an answer lost), or say so oddly.
  raw.created_at = row.phase !== 'creating' ? row.created_at : g.chance(0.3) ? iso(NOW - g.int(0, 5) * MIN)
    : g.pick([iso(NOW - g.int(1, 180) * MIN), iso(NOW + g.int(1, 30) * MIN), spell(g, NOW - g.int(1, 60) * MIN), 'yesterday', 'Jan 1', '2026', '1', null, 12345]);
  // Wrapped keys the parser ignores, and the field order shuffled a little, change nothing.
  if (g.chance(0.1)) raw.sender = { external_id: 'SND-1' };
  return { raw, lies, odd, timeKind };
}

/** The instant the service claims, as paybatch should believe it: a readable string no further ahead than the skew allowed. */
function believedMs(raw: Record<string, unknown>): number | null {
  const v = raw.updated_at;
  if (typeof v !== 'string') return null;
  const ms = Date.parse(v);
  return Number.isNaN(ms) || ms > NOW + MAX_CLOCK_SKEW_MS ? null : ms;
}

// ---------------------------------------------------------------------------
// The oracle.

interface Case {
  row: PipelineRow;
  asked: Asked;
  obs: Observation;
  tx: ServiceTransaction;
  limits: Record<string, string>;
  allowance: Allowance;
  decision: Decision;
}

/** Violations found, each named by the invariant. */
interface Violation {
  invariant: string;
  detail: string;
}

function verify(c: Case): Violation[] {
  const { row, asked, obs, tx, limits, decision } = c;
  const out: Violation[] = [];
  const fail = (invariant: string, detail: string): void => {
    out.push({ invariant, detail });
  };
  const { patch, action, label } = decision;
  const changes = patch?.changes ?? {};
  const after: PipelineRow = { ...row, ...changes };
  const fundedBefore = row.funded_at !== null;
  const fundedAfter = after.funded_at !== null;
  const ownFunding = asked === 'fund' && row.phase === 'funding';
  const seenMs = believedMs(obs.raw);
  const storedMs = row.observed_at === null ? null : Date.parse(row.observed_at);
  const txShowsFunding = SPEC_FUNDED.has(tx.state) || (obs.raw.funded_at !== undefined && obs.raw.funded_at !== null);

  // Labels and patches agree.
  const noPatchLabels = ['stale', 'after_final', 'held', 'not_created_yet', 'not_in_flight'];
  if ((patch === null) !== noPatchLabels.includes(label)) fail('label', `label ${label} with patch ${JSON.stringify(patch)}`);
  if (patch === null && action.kind !== 'none') fail('label', `action ${action.kind} without a patch`);

  // [D10] A held row whose own funding call answers 200 records the debit, and nothing else: it stays held.
  if (row.phase === 'held' && asked === 'fund' && !fundedBefore && row.fund_attempts > 0) {
    const keys = Object.keys(changes).sort().join(',');
    if (keys !== 'funded_at,heard_at' || action.kind !== 'none' || patch?.reserve) fail('(6) fund 200 after a hold', `changes ${keys}, action ${action.kind}`);
    return out;
  }
  // Rows not in flight, and rows being created asked about by anything but their create or lookup, never move.
  if (!IN_FLIGHT.has(row.phase) || (row.phase === 'creating' && asked !== 'create' && asked !== 'lookup')) {
    if (patch !== null || action.kind !== 'none') fail('not-in-flight', `phase ${row.phase} moved by ${asked}`);
    return out;
  }
  // (3) A final row never moves, whatever it is told.
  if (row.phase === 'final') {
    if (patch !== null || action.kind !== 'none') fail('(3) final', `final row (${row.state}) moved to ${JSON.stringify(changes)}`);
    return out;
  }

  // (1) An answer that is not what was asked holds the row and is never acted on.
  if (obs.lies.size > 0) {
    if (label !== 'mismatch' || action.kind !== 'hold' || changes.phase !== 'held') {
      fail('(1) lie acted on', `lies [${[...obs.lies].join(',')}] gave ${label}/${action.kind}/${String(changes.phase)}`);
    }
    for (const key of ['state', 'transaction_id', 'input_amount', 'output_amount', 'input_currency', 'output_currency', 'observed_at', 'paid_at', 'refunded_at', 'refunded_amount', 'created_at'] as const) {
      if (key in changes) fail('(1) lie stored', `a held answer stored ${key}=${String(changes[key])}`);
    }
    if (patch?.reserve) fail('(1) lie reserved', 'a held answer reserved money');
    // (6) The fund answer still proves the funding.
    if (ownFunding && !fundedBefore && !changes.funded_at) fail('(6) fund 200 is proof', 'fund answer with a mismatch held without funded_at');
    if (changes.funded_at !== undefined && !(ownFunding && !fundedBefore)) fail('(1) lie funded', `funded_at set from ${asked} in ${row.phase}`);
    return out;
  }
  if (label === 'mismatch' && obs.odd.size === 0) {
    fail('(1) false hold', `a truthful answer was held: ${action.kind === 'hold' ? action.detail : ''}`);
    return out;
  }
  if (label === 'mismatch') return out; // an odd spelling (leading zeros) held: conservative, allowed

  // Where the row may go.
  const allowed = NEXT_PHASES[row.phase] ?? [];
  if (changes.phase !== undefined && changes.phase !== row.phase && !allowed.includes(changes.phase)) fail('(3) phase moved back', `${row.phase} -> ${changes.phase}`);
  if (after.phase === 'final' && !specFinal(after.state, fundedAfter)) fail('(3) final without a final state', `final with state ${after.state}, funded ${fundedAfter}`);
  if (patch && after.phase !== 'final' && after.phase !== 'funding' && specFinal(after.state, fundedAfter)) {
    fail('(3) final state not settled', `state ${after.state} (funded ${fundedAfter}) left in phase ${after.phase}`);
  }
  if (fundedBefore && 'funded_at' in changes && changes.funded_at !== row.funded_at) fail('(4) funding rewritten', `funded_at ${row.funded_at} -> ${String(changes.funded_at)}`);

  // (2) An older observation never moves a row (only a fund answer, by (6), records the funding).
  if (row.phase !== 'creating') {
    const older = (storedMs !== null && seenMs === null) || (storedMs !== null && seenMs !== null && seenMs < storedMs);
    const sameInstant = (storedMs === null && seenMs === null) || (storedMs !== null && seenMs === storedMs);
    const lowerRank = sameInstant && row.state !== null && tx.state in SPEC_ORDER && row.state in SPEC_ORDER && (SPEC_ORDER[tx.state] as number) < (SPEC_ORDER[row.state] as number);
    if (older || lowerRank) {
      const why = older ? `older (${obs.timeKind})` : `same instant, earlier state ${tx.state} < ${row.state}`;
      if (!ownFunding && patch !== null) fail('(2) older moved the row', `${why} gave ${JSON.stringify(changes)}`);
      if (ownFunding) {
        const extra = Object.keys(changes).filter((k) => !['heard_at', 'funded_at', 'phase', 'next_read_at'].includes(k));
        if (extra.length > 0) fail('(2) older stored by fund answer', `${why} stored ${extra.join(',')}`);
        if (changes.phase !== undefined && changes.phase !== 'funded') fail('(2) older moved the row', `${why} fund answer moved to ${changes.phase}`);
      }
      if (action.kind === 'fund' || action.kind === 'cancel' || action.kind === 'cancel_again') fail('(2) older acted on', `${why} gave ${action.kind}`);
    }
    // Conversely: a newer observation of a row in flight is not dropped as stale.
    const newer = seenMs !== null && (storedMs === null || seenMs > storedMs);
    if (newer && label === 'stale') {
      fail('(2) newer dropped', `${row.phase}/${row.state} -> ${tx.state} (${obs.timeKind}) dropped as stale`);
    }
  }

  // The funding deadline counts from the transaction's creation: for one found by lookup, from when the service says it
  // created it (an ISO 8601 instant, never before paybatch first asked nor after now; a date it cannot read counts as
  // now); for a create's answer, from now.
  if (row.phase === 'creating' && patch !== null && changes.phase !== 'held') {
    const raw = obs.raw.created_at;
    const said = typeof raw === 'string' && /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/i.test(raw) ? Date.parse(raw) : Number.NaN;
    const askedMs = row.created_at === null ? -Infinity : Date.parse(row.created_at);
    const expected = asked === 'lookup' && !Number.isNaN(said) ? iso(Math.min(Math.max(said, askedMs), NOW)) : iso(NOW);
    if (changes.created_at !== expected) fail('created_at', `adopted by ${asked} with created_at ${String(changes.created_at)}, expected ${expected}`);
  }
  // (6) A 200 to paybatch's own funding call is proof of funding.
  if (ownFunding && !fundedBefore) {
    if (typeof changes.funded_at !== 'string') fail('(6) fund 200 is proof', `fund answer (${tx.state}) left funded_at ${String(changes.funded_at)}`);
    if (!['funded', 'final'].includes(after.phase)) fail('(6) fund 200 is proof', `fund answer left the row in ${after.phase}`);
  }
  if (changes.funded_at !== undefined && !fundedBefore && !ownFunding && !txShowsFunding) fail('(4) funded without proof', `funded_at set by ${asked} seeing ${tx.state}`);

  // (4) Funding: at most once, only from approved, within the guard, before the deadline.
  if (action.kind === 'fund') {
    const amount = action.amount;
    const currency = row.request.input_currency_code;
    const limit = limits[currency];
    const createdAt = after.created_at;
    if (!['creating', 'created', 'funding'].includes(row.phase)) fail('(4) fund from phase', `fund from ${row.phase}`);
    if (row.phase === 'funding' && (asked !== 'resolve' || row.fund_attempts >= FUND_ATTEMPTS)) fail('(4) fund again', `fund again from ${asked}, attempts ${row.fund_attempts}`);
    if (fundedBefore || fundedAfter) fail('(4) funded twice', `fund with funded_at ${String(after.funded_at)}`);
    if (tx.state !== 'approved' || after.state !== 'approved') fail('(4) fund not approved', `fund on observed ${tx.state}, stored ${after.state}`);
    if (txShowsFunding) fail('(4) funded twice', 'fund while the service shows a funding');
    if (createdAt === null || NOW >= Date.parse(createdAt) + DEADLINE_MS) fail('(4) fund after deadline', `created ${createdAt}`);
    if (!DIGITS.test(amount)) fail('(5) amount not integer', amount);
    else if (limit !== undefined && BigInt(amount) > BigInt(limit)) fail('(4) fund over max_input_per_row', `${amount} > ${limit}`);
    if (c.allowance === 'held') fail('(4) fund while held', 'allowance held');
    if (action.currency !== currency) fail('(4) fund currency', action.currency);
    if (tx.input_amount_in_cents !== null && tx.input_amount_in_cents !== amount) fail('(4) fund another quote', `funds ${amount}, the service quoted ${tx.input_amount_in_cents}`);
    const reserve = patch?.reserve;
    if (!reserve || reserve.currency !== currency || !DIGITS.test(amount) || reserve.amount !== BigInt(amount) || reserve.budget !== (c.allowance === 'held' ? null : c.allowance)) {
      fail('(4) reservation', `reserve ${JSON.stringify(reserve, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))} for ${amount}`);
    }
    if (after.phase !== 'funding' || after.fund_attempts !== row.fund_attempts + 1 || after.next_read_at !== null) fail('(4) funding intent', `${after.phase} attempts ${after.fund_attempts}`);
    // The row stores what it funds: the budget sums rows' input_amount, the fund answer is checked against it [D10].
    if (after.input_amount !== amount) fail('(5) stored amount is not the funded amount', `stored ${String(after.input_amount)}, funds ${amount}`);
    if (!patch?.audits?.some((a) => a.action === 'fund_requested' && a.details.amount === amount)) fail('audit', 'fund without fund_requested');
  } else if (patch?.reserve) {
    fail('(4) reservation without funding', action.kind);
  }

  // The guard is not over-strict either: an approved quote within every limit, in time, is funded.
  if (row.phase === 'created' && tx.state === 'approved' && !txShowsFunding) {
    const newerOrSame = (seenMs !== null && (storedMs === null || seenMs > storedMs)) || (tx.state === row.state && seenMs === storedMs);
    const quote = tx.input_amount_in_cents ?? row.input_amount;
    const limit = limits[row.request.input_currency_code];
    const deadline = Date.parse(row.created_at as string) + DEADLINE_MS;
    if (newerOrSame && quote !== null) {
      const over = limit !== undefined && BigInt(quote) > BigInt(limit);
      const expected = over ? 'cancel:quote_rejected' : NOW >= deadline ? 'cancel:funding_deadline' : c.allowance === 'held' ? 'cancel:approval_invalid' : 'fund';
      const got = action.kind === 'cancel' ? `cancel:${action.outcome}` : action.kind;
      if (got !== expected) fail('(4) guard decision', `quote ${quote}, limit ${String(limit)}, created ${row.created_at}: expected ${expected}, got ${got}`);
    }
  }
  // A cancel is one of paybatch's own limits, and never of a funded row.
  if (action.kind === 'cancel' && !['quote_rejected', 'funding_deadline', 'approval_invalid', 'sender_not_approved'].includes(action.outcome)) fail('cancel reason', action.outcome);
  if (action.kind === 'cancel' && (fundedBefore || fundedAfter)) fail('(4) cancel a funded row', `${row.phase}`);

  // (7) A cancellation sent again.
  const sends = row.cancels_sent ?? 0;
  const lastSent = row.cancel_sent_at ? Date.parse(row.cancel_sent_at) : null;
  const cancelDue = lastSent === null || NOW >= lastSent + firstInterval(POLLING);
  const cancellable = SPEC_CANCELLABLE.has(after.state ?? '') && obs.raw.may_cancel !== false;
  const accepted = Boolean(row.cancel_accepted_at);
  // Accepted: never sent again; given up, unsent, once it has had three intervals to be carried out.
  const acceptedLongAgo = accepted && NOW >= Date.parse(row.cancel_accepted_at as string) + CANCEL_SENDS * firstInterval(POLLING);
  if (action.kind === 'cancel_again' && accepted) {
    if (!action.given_up) fail('(7) cancel sent again after the service accepted it', `accepted ${String(row.cancel_accepted_at)}`);
    if (!acceptedLongAgo) fail('(7) accepted cancellation given up too soon', `accepted ${String(row.cancel_accepted_at)}`);
    if (!cancellable || sends > CANCEL_SENDS) fail('(7) accepted cancellation given up, not cancellable or given up before', `state ${String(after.state)}, ${sends} sent`);
    if (action.sends !== sends || after.cancels_sent !== CANCEL_SENDS + 1 || 'cancel_sent_at' in changes) fail('(7) accepted give-up counted', `${sends} -> ${String(after.cancels_sent)}, action ${action.sends}`);
    if (!patch?.audits?.some((a) => a.action === 'cancel_given_up' && (a.details as { accepted_at?: unknown }).accepted_at === row.cancel_accepted_at)) fail('audit', 'accepted give-up without its entry');
  } else if (action.kind === 'cancel_again') {
    if (row.phase !== 'cancelling' || after.phase !== 'cancelling') fail('(7) cancel again from phase', `${row.phase} -> ${after.phase}`);
    if (!cancellable) fail('(7) cancel again, not cancellable', `state ${String(after.state)}, may_cancel ${String(obs.raw.may_cancel)}`);
    if (!cancelDue) fail('(7) cancel again too soon', `last sent ${String(row.cancel_sent_at)}`);
    if (sends > CANCEL_SENDS) fail('(7) given up twice', `${sends} sent`);
    // Given up, the action says how many were sent; the count goes one past, which marks the give-up for a person.
    if (action.sends !== (action.given_up ? sends : sends + 1) || after.cancels_sent !== sends + 1) fail('(7) sends counted', `${sends} -> ${String(after.cancels_sent)}, action ${action.sends}`);
    if (action.given_up !== (sends >= CANCEL_SENDS)) fail('(7) sends beyond the policy', `${sends} sent, given_up ${action.given_up}`);
    if (action.given_up ? 'cancel_sent_at' in changes : after.cancel_sent_at !== iso(NOW)) fail('(7) time of the send', String(changes.cancel_sent_at));
    if (!patch?.audits?.some((a) => a.action === (action.given_up ? 'cancel_given_up' : 'cancel_requested'))) fail('audit', 'cancel again without its entry');
  } else if (row.phase === 'cancelling' && label === 'applied' && after.phase === 'cancelling' && cancellable && (accepted ? acceptedLongAgo : cancelDue) && sends <= CANCEL_SENDS) {
    // Nor over-strict: a current observation of a cancellable transaction, once due, sends it (or gives up).
    fail('(7) cancel not sent again', `${row.phase}/${row.state} -> ${String(after.state)}, ${sends} sent, last ${String(row.cancel_sent_at)}, accepted ${String(row.cancel_accepted_at)}, action ${action.kind}`);
  }
  if (action.kind !== 'cancel_again' && action.kind !== 'cancel' && ('cancels_sent' in changes || 'cancel_sent_at' in changes)) fail('(7) sends counted', 'without a cancellation');

  // (5) Money is exact: amounts stored are integer strings, the ones the service said or the row had.
  for (const key of ['input_amount', 'output_amount', 'refunded_amount'] as const) {
    const v = changes[key];
    if (v !== undefined && v !== null && (typeof v !== 'string' || !DIGITS.test(v))) fail('(5) amount not integer', `${key}=${String(v)}`);
  }
  if (patch && after.output_amount !== null && row.phase !== 'creating' && BigInt(after.output_amount) !== BigInt(row.request.output_amount_in_cents)) fail('(5) output amount changed', `${after.output_amount}`);
  if (patch && fundedAfter && after.input_amount !== null && row.input_amount !== null && fundedBefore && BigInt(after.input_amount) !== BigInt(row.input_amount)) fail('(5) funded amount changed', `${row.input_amount} -> ${after.input_amount}`);

  // The audit trail says where a state was learned; the batch counters too (RowPatch.learned).
  if (patch && changes.state !== undefined && changes.state !== row.state) {
    const learned = patch.audits?.find((a) => a.action === 'state_learned');
    if (!learned || learned.details.from !== SOURCE[asked] || learned.details.state !== changes.state) fail('audit', `state ${changes.state} learned without its audit`);
    if (patch.learned !== SOURCE[asked]) fail('learned counted', `state ${row.state} -> ${changes.state} by ${asked}, patch.learned ${String(patch.learned)} (action ${action.kind})`);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Running cases.

const REALISTIC: Record<string, readonly Asked[]> = {
  creating: ['create', 'create', 'lookup'],
  created: ['read', 'webhook', 'webhook'],
  funding: ['fund', 'fund', 'resolve', 'resolve', 'webhook', 'read'],
  funded: ['read', 'webhook', 'webhook'],
  cancelling: ['read', 'webhook', 'cancel'],
  final: ['read', 'webhook', 'fund'],
  held: ['webhook', 'read'],
};

interface Tally {
  cases: number;
  unparsed: number;
  labels: Record<string, number>;
  actions: Record<string, number>;
  /** What broke an invariant (the first five with their case). */
  unexplained: Violation[];
}

function runCases(seed: number, count: number, phases: readonly Phase[]): Tally {
  const g = new Gen(seed);
  const tally: Tally = { cases: 0, unparsed: 0, labels: {}, actions: {}, unexplained: [] };
  for (let i = 0; i < count; i++) {
    const phase = g.pick(phases);
    const { row, limits, allowance } = makeScenario(g, phase);
    const asked = g.chance(0.7) ? g.pick(REALISTIC[phase] ?? ALL_ASKED) : g.pick(ALL_ASKED);
    const obs = makeObservation(g, row, asked);
    const tx = parseTransaction(JSON.parse(JSON.stringify(obs.raw)) as unknown);
    if (!tx) {
      tally.unparsed += 1;
      continue;
    }
    const before = JSON.stringify(row);
    const decision = decide(row, { tx, asked }, NOW, policyOf(limits, allowance));
    tally.cases += 1;
    tally.labels[decision.label] = (tally.labels[decision.label] ?? 0) + 1;
    tally.actions[decision.action.kind] = (tally.actions[decision.action.kind] ?? 0) + 1;
    const violations = verify({ row, asked, obs, tx, limits, allowance, decision });
    if (JSON.stringify(row) !== before) violations.push({ invariant: 'pure', detail: 'decide changed the row it was given' });
    for (const v of violations) {
      if (tally.unexplained.length < 5) {
        tally.unexplained.push({ ...v, detail: `${v.detail}\n  row ${row.phase}/${row.state} funded=${row.funded_at !== null} observed_at=${row.observed_at} input=${row.input_amount} attempts=${row.fund_attempts}\n  asked ${asked}, raw ${JSON.stringify(obs.raw)}\n  decision ${JSON.stringify(decision, (_k, val: unknown) => (typeof val === 'bigint' ? `${val}n` : val))}` });
      } else {
        tally.unexplained.push(v);
      }
    }
  }
  return tally;
}

const ALL_PHASES: Phase[] = ['creating', 'created', 'funding', 'funded', 'cancelling', 'final', ...NOT_IN_FLIGHT_PHASES];

describe('decide against generated lies (properties)', () => {
  it.each([
    ['every phase', 0x5eed_0001, propertyRuns(10_000), ALL_PHASES],
    ['rows being created (create answer, lookup)', 0x5eed_0002, propertyRuns(4_000), ['creating']],
    ['created rows (the funding decision)', 0x5eed_0003, propertyRuns(6_000), ['created']],
    ['rows being funded (fund answer, resolve, others)', 0x5eed_0004, propertyRuns(6_000), ['funding']],
    ['funded and cancelling rows', 0x5eed_0005, propertyRuns(4_000), ['funded', 'cancelling']],
    ['final rows (nothing moves them)', 0x5eed_0006, propertyRuns(2_000), ['final']],
  ] as const)('%s: no invariant broken', (_name, seed, count, phases) => {
    const tally = runCases(seed, count, phases);
    expect(tally.unexplained.slice(0, 5).map((v) => `${v.invariant}: ${v.detail}`)).toEqual([]);
    expect(tally.unexplained).toHaveLength(0);
    // The generator reaches what it means to: most observations parse, and the decisions are varied.
    expect(tally.cases).toBeGreaterThan(count * 0.85);
  });

  it('the generator covers every label and action', () => {
    const tally = runCases(0x5eed_0007, propertyRuns(4_000), ALL_PHASES);
    expect(Object.keys(tally.labels).sort()).toEqual(['after_final', 'applied', 'held', 'mismatch', 'not_created_yet', 'not_in_flight', 'stale']);
    expect(Object.keys(tally.actions).sort()).toEqual(['cancel', 'cancel_again', 'fund', 'hold', 'none']);
  });
});

// ---------------------------------------------------------------------------
// Focused properties.

function baseRow(phase: Phase, overrides: Partial<PipelineRow> = {}): PipelineRow {
  const request = requestOf('gbr', 'PB-2026-00001', 125_000n);
  return {
    batch_id: 'batch-1', line: 1, external_id: 'PB-2026-00001', request, phase, outcome: null, outcome_detail: null,
    transaction_id: 'tx-1', state: 'initial', state_reason: null, state_reason_code: null,
    input_amount: '157988', input_currency: 'USD', output_amount: '125000', output_currency: 'GBP', refunded_amount: null,
    created_at: iso(NOW - 5 * MIN), funded_at: null, paid_at: null, refunded_at: null, settled_at: null,
    observed_at: iso(NOW - 5 * MIN), heard_at: iso(NOW - 5 * MIN), reads: 1, next_read_at: NOW, fund_attempts: 0, revision: 3,
    ...overrides,
  };
}

function txOf(row: PipelineRow, raw: Record<string, unknown>): ServiceTransaction {
  const tx = parseTransaction({
    id: row.transaction_id ?? 'tx-1', external_id: row.external_id, state: 'approved', type: 'bank',
    input_amount_in_cents: row.input_amount ?? '157988', input_currency: row.request.input_currency_code,
    output_amount_in_cents: row.request.output_amount_in_cents, output_currency: row.request.output_currency_code,
    updated_at: iso(NOW - MIN), ...raw,
  });
  if (!tx) throw new Error(`unparseable ${JSON.stringify(raw)}`);
  return tx;
}

const POLICY = policyOf({ USD: '200000' }, null);

describe('decide: focused properties', () => {
  it('the same instant in any time zone or precision is the same observation: nothing but heard_at changes', () => {
    const g = new Gen(0x71_2e);
    for (let i = 0; i < propertyRuns(1_500); i++) {
      const ms = NOW - g.int(1, 40 * MIN);
      const phase = g.pick<Phase>(['created', 'funded', 'cancelling']);
      const state = phase === 'funded' ? g.pick<TxState>(['pending', 'processing', 'error', 'manual']) : g.pick<TxState>(['initial', 'verified']);
      // A cancelling row's cancellation sent a minute ago: not due again.
      const row = baseRow(phase, { state, observed_at: iso(ms), funded_at: phase === 'funded' ? iso(ms) : null, created_at: iso(NOW - 30 * MIN), cancels_sent: 1, cancel_sent_at: iso(NOW - MIN) });
      const tx = txOf(row, { state, updated_at: spell(g, ms) });
      expect(tx.updated_at).toBe(row.observed_at);
      const d = decide(row, { tx, asked: g.pick(['read', 'webhook']) }, NOW, POLICY);
      expect(d.label).toBe('applied');
      expect(d.action.kind).toBe('none');
      // Only when it was heard, and the next read: the same phase, no state, no amounts, no observed_at.
      expect(Object.keys(d.patch?.changes ?? {}).filter((k) => !['heard_at', 'next_read_at', 'phase'].includes(k))).toEqual([]);
      expect(d.patch?.changes.phase ?? phase).toBe(phase);
      // One millisecond earlier, in any spelling, is older: nothing moves.
      const older = decide(row, { tx: txOf(row, { state: 'approved', updated_at: spell(g, ms - 1) }), asked: 'webhook' }, NOW, POLICY);
      expect(older.patch).toBeNull();
      expect(older.label).toBe('stale');
    }
  });

  it('keeps the service\'s may_cancel with the state it came with: a newer observation sets it (absent: not said), an older one never moves it', () => {
    const at = NOW - 10 * MIN;
    const row = baseRow('funded', { state: 'stuck', observed_at: iso(at), funded_at: iso(at), created_at: iso(NOW - 30 * MIN), may_cancel: false });
    const newer = decide(row, { tx: txOf(row, { state: 'stuck', may_cancel: true, updated_at: iso(at + 1) }), asked: 'read' }, NOW, POLICY);
    expect(newer.patch?.changes).toMatchObject({ may_cancel: true, observed_at: iso(at + 1) });
    const unsaid = decide(row, { tx: txOf(row, { state: 'processing', updated_at: iso(at + 1) }), asked: 'webhook' }, NOW, POLICY);
    expect(unsaid.patch?.changes.may_cancel).toBeNull();
    for (const older of [true, 'yes']) {
      expect(decide(row, { tx: txOf(row, { state: 'stuck', may_cancel: older, updated_at: iso(at - 1) }), asked: 'webhook' }, NOW, POLICY).patch).toBeNull();
    }
    // The same observation again: only when it was heard changes.
    const same = decide(row, { tx: txOf(row, { state: 'stuck', may_cancel: true, updated_at: iso(at) }), asked: 'read' }, NOW, POLICY);
    expect(same.patch?.changes).not.toHaveProperty('may_cancel');
  });

  it('money beyond 2^53 is compared exactly: max_input_per_row one minor unit over refuses, at the limit funds', () => {
    const limit = 2n ** 53n; // 9007199254740992: 2^53 + 1 is the same float
    for (const [quote, expected] of [[TWO_53 + 1n, 'cancel'], [TWO_53, 'fund'], [TWO_53 - 1n, 'fund'], [999_999_999_999_999_999n, 'cancel']] as const) {
      const row = baseRow('created', { state: 'initial', input_amount: quote.toString() });
      const d = decide(row, { tx: txOf(row, { input_amount_in_cents: quote.toString() }), asked: 'webhook' }, NOW, policyOf({ USD: limit.toString() }, TWO_53 * 4n));
      expect(d.action.kind).toBe(expected);
      if (d.action.kind === 'fund') {
        expect(d.action.amount).toBe(quote.toString());
        expect(d.patch?.reserve?.amount).toBe(quote);
      } else if (d.action.kind === 'cancel') {
        expect(d.action.outcome).toBe('quote_rejected');
        expect(d.action.detail).toContain(`${(quote / 100n).toLocaleString('en-US')}.${(quote % 100n).toString().padStart(2, '0')} USD`);
      }
    }
  });

  it('an output amount beyond 2^53 matches only when carried exactly (a JSON number cannot carry it)', () => {
    const request = requestOf('global', 'PB-2026-00002', TWO_53 + 1n);
    const row = baseRow('funded', { request, external_id: 'PB-2026-00002', state: 'processing', funded_at: iso(NOW - MIN), output_amount: request.output_amount_in_cents, output_currency: 'USD' });
    const exact = txOf(row, { state: 'paid', external_id: row.external_id, output_amount_in_cents: '9007199254740993', output_currency: 'USD' });
    expect(decide(row, { tx: exact, asked: 'webhook' }, NOW, POLICY).patch?.changes.phase).toBe('final');
    const rounded = txOf(row, { state: 'paid', external_id: row.external_id, output_amount_in_cents: Number(TWO_53 + 1n) /* 2^53 as a float */, output_currency: 'USD' });
    expect(decide(row, { tx: rounded, asked: 'webhook' }, NOW, POLICY).label).toBe('mismatch');
  });

  it('a fund answer in funding is proof of funding whatever it says, if it is the row\'s own', () => {
    const g = new Gen(0xf0_2d);
    for (let i = 0; i < propertyRuns(1_000); i++) {
      const row = baseRow('funding', { state: g.pick(['approved', 'canceled']), fund_attempts: g.int(1, 3), observed_at: g.chance(0.8) ? iso(NOW - g.int(0, 20) * MIN) : null });
      const state = g.pick([...KNOWN_STATES, ...UNKNOWN_STATES]);
      const updated = g.pick([null, 'garbled', iso(NOW - g.int(0, 40) * MIN), iso(NOW + 24 * 60 * MIN)]);
      const d = decide(row, { tx: txOf(row, { state, updated_at: updated }), asked: 'fund' }, NOW, POLICY);
      expect(typeof d.patch?.changes.funded_at).toBe('string');
      expect(['funded', 'final']).toContain(d.patch?.changes.phase);
      expect(d.action.kind).toBe('none');
    }
  });

  it('a KYC-waiting row past its deadline is cancelled (sender_not_approved) by any current observation', () => {
    const row = baseRow('created', { state: 'verified', created_at: iso(NOW - DEADLINE_MS), observed_at: iso(NOW - 10 * MIN) });
    for (const asked of ['read', 'webhook'] as const) {
      const d = decide(row, { tx: txOf(row, { state: 'verified', updated_at: row.observed_at }), asked }, NOW, POLICY);
      expect(d.action).toMatchObject({ kind: 'cancel', outcome: 'sender_not_approved' });
      expect(d.patch?.changes.phase).toBe('cancelling');
    }
  });
});

// ---------------------------------------------------------------------------
// The answer checks on their own.

describe('answer checks', () => {
  const asked = (committed: string | null, transactionId: string | null = 'tx-7') => ({
    external_id: 'PB-2026-00007', request: requestOf('gbr', 'PB-2026-00007', 125_000n), transaction_id: transactionId, committed_input_amount: committed,
  });
  const truth = (): Record<string, unknown> => ({
    id: 'tx-7', external_id: 'PB-2026-00007', state: 'processing', input_amount_in_cents: '157988', input_currency: 'USD', output_amount_in_cents: '125000', output_currency: 'GBP', updated_at: iso(NOW),
  });
  const FIELD_OF: Record<string, Mismatch['field']> = {
    id: 'id', external_id: 'external_id', input_amount_in_cents: 'input_amount_in_cents', input_currency: 'input_currency', output_amount_in_cents: 'output_amount_in_cents', output_currency: 'output_currency',
  };

  it('checkAnswer names exactly the fields changed, for thousands of one- and two-field lies', () => {
    const g = new Gen(0xc4_ec);
    const lieFor = (key: string, value: unknown): unknown => {
      switch (key) {
        case 'id': return g.pick(['tx-8', 'TX-7', 'tx-7 ', 'tx-07']);
        case 'external_id': return g.pick(['PB-2026-00008', 'pb-2026-00007', 'PB-2026-00007 ', 'PB-2026-0007']);
        case 'input_currency': case 'output_currency': return g.pick(['EUR', 'usd', 'gbp', 'Usd', null, 'NGN', 'JPY']);
        default: {
          const v = BigInt(value as string);
          return g.pick([(v + 1n).toString(), (v - 1n).toString(), `-${v}`, `${v}.0`, null, Number(v) + 0.25, (v * 10n).toString(), '9'.repeat(19)]);
        }
      }
    };
    let cases = 0;
    const runs = propertyRuns(4_000);
    for (let i = 0; i < runs; i++) {
      const raw = truth();
      const keys = Object.keys(FIELD_OF);
      const changed = new Set<string>();
      for (let k = g.int(0, 2); k > 0; k--) changed.add(g.pick(keys));
      for (const key of changed) raw[key] = lieFor(key, raw[key]);
      const tx = parseTransaction(raw);
      if (!tx) continue;
      cases += 1;
      const committed = g.chance(0.5) ? '157988' : null;
      const withId = g.chance(0.8);
      const found = new Set(checkAnswer(asked(committed, withId ? 'tx-7' : null), tx).map((m) => m.field));
      const expected = new Set([...changed].map((k) => FIELD_OF[k] as Mismatch['field'])
        .filter((f) => (f !== 'input_amount_in_cents' || committed !== null) && (f !== 'id' || withId)));
      expect([...found].sort()).toEqual([...expected].sort());
    }
    expect(cases).toBeGreaterThan(runs * 0.875);
  });

  it('amounts spelled as JSON numbers are the same amounts; leading zeros are not silently equal', () => {
    const tx = parseTransaction({ ...truth(), input_amount_in_cents: 157988, output_amount_in_cents: 125000 });
    expect(tx && checkAnswer(asked('157988'), tx)).toEqual([]);
    const zeros = parseTransaction({ ...truth(), output_amount_in_cents: '0125000' });
    expect(zeros && checkAnswer(asked(null), zeros).map((m) => m.field)).toEqual(['output_amount_in_cents']);
  });

  it('lookupHit adopts only a list of exactly the row\'s own transaction', () => {
    const g = new Gen(0x100c);
    for (let i = 0; i < propertyRuns(2_000); i++) {
      const list: ServiceTransaction[] = [];
      let strangers = 0;
      let own = 0;
      for (let k = g.int(0, 3); k > 0; k--) {
        const stranger = g.chance(0.3);
        const tx = parseTransaction({ ...truth(), id: `tx-${g.int(1, 9)}`, external_id: stranger ? g.pick(['PB-2026-00008', 'pb-2026-00007', 'PB-2026-00007 ']) : 'PB-2026-00007' });
        if (tx) list.push(tx);
        if (stranger) strangers += 1;
        else own += 1;
      }
      const hit = lookupHit(asked(null, null), list);
      if (strangers > 0 || own > 1) {
        expect(hit.tx).toBeNull();
        expect(hit.mismatches.length).toBeGreaterThan(0);
      } else if (own === 1) {
        expect(hit.tx).toBe(list[0]);
        expect(hit.mismatches).toEqual([]);
      } else {
        expect(hit).toEqual({ tx: null, mismatches: [] });
      }
    }
  });
});

// ---------------------------------------------------------------------------
// The read schedule.

describe('read schedule', () => {
  it('a read is always ahead, never later than a deadline ahead, and the first window holds at most its reads', () => {
    const g = new Gen(0x5c_4e);
    const broken: string[] = [];
    for (let i = 0; i < propertyRuns(1_000); i++) {
      const first = { first_window_ms: g.pick([3_600_000, 600_000, 1_000]), first_window_reads: g.int(1, 12), later_interval_ms: 0, reads_per_second: 5 };
      // A later interval shorter than the first window's would read more often after it: not a configuration D17 allows.
      const polling: PollingPolicy = { ...first, later_interval_ms: Math.max(g.pick([3_600_000, 60_000]), firstInterval(first)) };
      const created = NOW - g.int(0, 90 * MIN);
      const deadline = g.chance(0.5) ? created + g.int(1, 60) * MIN : undefined;
      // Follow one row's counted reads from its creation: the first is set at creation plus the first interval.
      let at = created + firstInterval(polling);
      let reads = 0;
      let inWindow = 0;
      for (let k = 0; k < 40 && at < created + 6 * 3_600_000; k++) {
        if (at < created + polling.first_window_ms) inWindow += 1;
        const next = nextReadAt({ created_at: iso(created), reads }, at, polling, true, deadline);
        reads += 1;
        if (!(next > at)) broken.push(`read ${reads} at ${at}: next ${next} not ahead`);
        if (deadline !== undefined && deadline > at && next > deadline) broken.push(`read ${reads} at ${at}: next ${next} after the deadline ${deadline}`);
        at = next;
      }
      // At most the window's reads, plus one brought forward to a deadline.
      if (inWindow > polling.first_window_reads + (deadline === undefined ? 0 : 1)) broken.push(`${inWindow} reads in the first window of ${JSON.stringify(polling)}`);
    }
    expect(broken).toEqual([]);
  });
});

// ---------------------------------------------------------------------------
// Defects these properties found, fixed: their minimal cases (the lines cited are those of decide.ts before the fix).

describe('defects found (minimal cases)', () => {
  /**
   * A — invariant (5)/(4): the row must store the amount it funds. When an observation
   * counts as "the same" (same state, same updated_at) but quotes another input amount,
   * decide funds (and reserves) the new amount while the patch keeps the old
   * input_amount (decide.ts:244 `{ heard_at }` only; fundOrEnd, decide.ts:167-171,
   * does not write input_amount). The budget sums the rows' input_amount
   * (sqlite/budget.ts and postgres/budget.ts reservationRefused, the rule in queries/budget.ts exceedsBudget), and the fund answer is checked against
   * the stored amount (decide.ts:223), so a correct 200 is then held as a mismatch.
   */
  it('A: a "same" observation with a new quote funds an amount the row does not store', () => {
    const row = baseRow('created', { state: 'approved', fund_attempts: FUND_ATTEMPTS, input_amount: '100000', observed_at: iso(NOW - 2 * MIN) });
    const tx = txOf(row, { state: 'approved', updated_at: iso(NOW - 2 * MIN), input_amount_in_cents: '150000' });
    const d = decide(row, { tx, asked: 'read' }, NOW, policyOf({ USD: '200000' }, 200_000n));
    expect(d.action).toMatchObject({ kind: 'fund', amount: '150000' });
    expect(d.patch?.reserve?.amount).toBe(150_000n);
    // Fails: the patch has no input_amount, the row keeps 100000.
    expect({ ...row, ...d.patch?.changes }.input_amount).toBe('150000');
  });

  /**
   * B — invariant (2)/(3): a newer observation is dropped. A row in 'funding' whose
   * stored state is 'canceled' (stored by a webhook while the funding call was out,
   * decide.ts:253) counts as final because funded_at is null (isNewer ->
   * isFinal('canceled', false), payout-states.ts:104), so the owner's resolve
   * read showing 'refunded' (funded, then cancelled) or 'canceled' at a later
   * updated_at is 'stale' (decide.ts:241): the row stays in 'funding' for ever, its
   * debit and refund never recorded.
   */
  it('B: a resolve read of refunded is dropped for a funding row that a webhook saw canceled', () => {
    const row = baseRow('funding', { state: 'canceled', fund_attempts: 1, observed_at: iso(NOW - 3 * MIN), next_read_at: null });
    const tx = txOf(row, { state: 'refunded', updated_at: iso(NOW - MIN) });
    const d = decide(row, { tx, asked: 'resolve' }, NOW, POLICY);
    expect(d.label).toBe('applied'); // fails: 'stale'
    expect(d.patch?.changes).toMatchObject({ phase: 'final', state: 'refunded' });
    expect(typeof d.patch?.changes.funded_at).toBe('string');
  });

  /**
   * C — counters (RowPatch.learned, countRead): a state change that leads to a fund or a
   * cancel is not counted. fundOrEnd (decide.ts:167-171) and cancel() (decide.ts:107-112)
   * build patches without `learned` or `countRead`, so the batch's "state changes
   * learned by webhook / polling / in answers" miss the change to 'approved' that
   * every funded row goes through, and the read that saw it is not counted against
   * the polling budget [D17].
   */
  it('C: the state change to approved that triggers a funding is not counted as learned', () => {
    const row = baseRow('created', { state: 'initial', reads: 2 });
    const d = decide(row, { tx: txOf(row, { state: 'approved' }), asked: 'read' }, NOW, POLICY);
    expect(d.action.kind).toBe('fund');
    expect(d.patch?.changes.state).toBe('approved');
    expect(d.patch?.learned).toBe('polling'); // fails: undefined
    expect(d.patch?.countRead).toBe(true);
  });

  /**
   * D — read schedule: a row waiting on its sender's KYC is read no later than its
   * funding deadline (read-schedule.ts:17-20; decide.ts:231-236 passes the deadline in
   * follow()), except when the read found an older observation: the stale branch
   * (decide.ts:242) calls nextReadAt without the deadline, so the next read can come an
   * hour later, past engine.funding_deadline_ms (and past the service's own one-hour
   * cancellation): the row is not ended as sender_not_approved in time.
   */
  /**
   * E — invariant (6): a 200 to paybatch's own funding call that comes back after a webhook held the row (its answer
   * did not match) was dropped ('held', no patch): the service funded the transaction, the row said it was not.
   */
  it('E: a fund 200 after the row was held meanwhile records the debit, and the row stays held', () => {
    const row = baseRow('held', { state: 'approved', outcome: 'answer_mismatch', fund_attempts: 1, next_read_at: null });
    const d = decide(row, { tx: txOf(row, { state: 'pending' }), asked: 'fund' }, NOW, POLICY);
    expect(d.patch?.changes).toEqual({ funded_at: iso(NOW), heard_at: iso(NOW) });
    expect(d.patch?.audits?.map((a) => a.action)).toEqual(['fund_answered_after_hold']);
    expect(d.action.kind).toBe('none');
    // Never funded by paybatch: a fund answer cannot be its own, nothing is recorded.
    expect(decide({ ...row, fund_attempts: 0 }, { tx: txOf(row, { state: 'pending' }), asked: 'fund' }, NOW, POLICY).patch).toBeNull();
  });

  /**
   * F — invariant (3): the steps' own holds (a cancel's answer, a lookup's) moved a row that had become final
   * meanwhile (a webhook said canceled) to held.
   */
  it('F: a hold of a row already final moves nothing', () => {
    const row = baseRow('final', { state: 'canceled', settled_at: iso(NOW - MIN), next_read_at: null });
    const d = hold(row, 'cancel', [{ field: 'id', asked: 'tx-1', answered: 'tx-2' }], NOW);
    expect(d).toMatchObject({ patch: null, label: 'after_final', action: { kind: 'none' } });
  });

  /**
   * G — invariant (4): a transaction adopted by lookup (after a crash) had its funding deadline counted from the
   * lookup, not from its creation: found an hour late, it was still funded.
   */
  it('G: a transaction found by lookup past its funding deadline is not funded; one created by a late create is', () => {
    const row = baseRow('creating', { transaction_id: null, state: null, created_at: null, observed_at: null, input_amount: null, input_currency: null, output_amount: null, output_currency: null });
    const tx = txOf({ ...row, transaction_id: 'tx-1' }, { state: 'approved', created_at: iso(NOW - 55 * MIN), updated_at: iso(NOW - 54 * MIN) });
    const d = decide(row, { tx, asked: 'lookup' }, NOW, POLICY);
    expect(d.patch?.changes.created_at).toBe(iso(NOW - 55 * MIN));
    expect(d.action).toMatchObject({ kind: 'cancel', outcome: 'funding_deadline' });
    // Never before paybatch asked for it: a service that says so cannot age the row further (nor put it in a day
    // already reported), and a date in a looser spelling than ISO 8601 is not believed.
    const asked = { ...row, created_at: iso(NOW - 10 * MIN) };
    expect(decide(asked, { tx, asked: 'lookup' }, NOW, POLICY)).toMatchObject({ patch: { changes: { created_at: iso(NOW - 10 * MIN) } }, action: { kind: 'fund' } });
    // RFC 3339's space for the T, and an offset without its colon, are read.
    for (const spelled of ['2026-11-21 11:05:00Z', '2026-11-21T12:05:00+0100']) {
      const other = txOf({ ...row, transaction_id: 'tx-1' }, { state: 'approved', created_at: spelled, updated_at: iso(NOW - 54 * MIN) });
      expect(decide(row, { tx: other, asked: 'lookup' }, NOW, POLICY)).toMatchObject({ patch: { changes: { created_at: iso(NOW - 55 * MIN) } }, action: { kind: 'cancel' } });
    }
    const loose = txOf({ ...row, transaction_id: 'tx-1' }, { state: 'approved', created_at: 'Jan 1', updated_at: iso(NOW - 54 * MIN) });
    expect(decide(asked, { tx: loose, asked: 'lookup' }, NOW, POLICY)).toMatchObject({ patch: { changes: { created_at: iso(NOW) } }, action: { kind: 'fund' } });
    // Claimed an hour ago, its create sent only now (taken up after a crash): made now, funded.
    const late = { ...row, created_at: iso(NOW - 60 * MIN) };
    const made = txOf({ ...row, transaction_id: 'tx-1' }, { state: 'approved', created_at: iso(NOW), updated_at: iso(NOW) });
    expect(decide(late, { tx: made, asked: 'create' }, NOW, POLICY)).toMatchObject({ patch: { changes: { created_at: iso(NOW) } }, action: { kind: 'fund' } });
  });

  it('D: a stale read of a KYC-waiting row schedules the next read past its funding deadline', () => {
    const row = baseRow('created', { state: 'verified', created_at: iso(NOW - 45 * MIN), observed_at: iso(NOW - MIN), reads: 8 });
    const deadline = NOW + 5 * MIN;
    const fresh = decide(row, { tx: txOf(row, { state: 'verified', updated_at: iso(NOW - MIN) }), asked: 'read' }, NOW, POLICY);
    expect(fresh.patch?.changes.next_read_at).toBe(deadline); // the same observation: clamped to the deadline
    const stale = decide(row, { tx: txOf(row, { state: 'initial', updated_at: iso(NOW - 2 * MIN) }), asked: 'read' }, NOW, POLICY);
    expect(stale.label).toBe('stale');
    expect(stale.schedule?.at).toBeLessThanOrEqual(deadline); // fails: NOW + 1h
  });
});
