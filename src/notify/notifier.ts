/**
 * The notifier: facts of the engine's log go into the durable outbox (one record
 * per channel told), and a delivery loop sends what is due. It never delays a
 * payout: observing queues asynchronously and swallows its failures, and sending
 * happens on its own loop, bounded by each channel's timeout.
 *
 * Delivery is at least once: a record is claimed for longer than a whole send
 * takes (of several workers, one sends it), then marked delivered, or failed with
 * its next attempt drawn by full-jitter backoff, or given up after the last
 * attempt. A worker that dies mid-send leaves the claim to run out, and the
 * notification is sent again: a receiver keeps the dedupe keys it acted on.
 */
import type { BackoffPolicy } from '../api/backoff.js';
import { backoffDelay } from '../api/backoff.js';
import type { Clock } from '../clock.js';
import type { PipelineLog } from '../engine/pipeline.js';
import type { NotificationRecord, NotificationStore } from '../store/port.js';
import type { SummaryStore } from './batch-summary.js';
import { batchSummary } from './batch-summary.js';
import { WHOLE_MAIL_TIMEOUTS } from './channels/email.js';
import type { Sender } from './channels/sender.js';
import { scrub } from './channels/sender.js';
import type { NotificationEvent, NotificationsConfig } from './config.js';
import { subscribes } from './config.js';
import type { BatchSummary } from './events.js';
import { notificationEventOf, notificationFor } from './events.js';
import { outgoingOf, payloadOf } from './render.js';

export type NotifierStore = NotificationStore & SummaryStore;

export interface NotifierDeps {
  store: NotifierStore;
  config: NotificationsConfig;
  /** One sender per configured channel (channels/index.ts openChannels). */
  senders: ReadonlyMap<string, Sender>;
  clock: Clock;
  /** The engine's own log, not the notifying one: the notifier's events are not news to notify. */
  log: PipelineLog;
  /** Text no log line may quote (signing secrets, passwords, chat URLs). */
  secrets?: readonly string[];
  random?: () => number;
}

/**
 * Sends in flight at once. Each runs on its own: a receiver that hangs holds its
 * slots for its channel's timeout at most, then backs off, and the next claim
 * does not wait for it.
 */
const MAX_IN_FLIGHT = 32;
/** Beyond a whole send: a claim outlives the slowest send by this much, so no other worker takes it up meanwhile. */
const CLAIM_MARGIN_MS = 30_000;
/** Retries this process set itself, remembered to wake the loop on time (beyond this, the poll finds them). */
const REMEMBERED_RETRIES = 1_000;

export class Notifier {
  private readonly policy: BackoffPolicy;
  /** How long a claim lasts: longer than any channel's whole send. */
  readonly claimMs: number;
  private readonly pending = new Set<Promise<void>>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly stopSends = new AbortController();
  private retriesAt: number[] = [];
  private loop: Promise<void> | null = null;
  private stopping = false;
  /** Whether the stop leaves time to send what is due once more. */
  private drain = false;
  private wakeUp: (() => void) | null = null;
  private woken = false;

  constructor(private readonly deps: NotifierDeps) {
    const { retry, channels } = deps.config;
    this.policy = { baseMs: retry.base_ms, capMs: retry.cap_ms, attempts: retry.attempts };
    const slowest = Math.max(0, ...Object.values(channels).map((c) => c.timeout_ms));
    this.claimMs = slowest * WHOLE_MAIL_TIMEOUTS + CLAIM_MARGIN_MS;
  }

  /**
   * A log event, seen: when it is news for a channel, it is queued for each
   * channel told, later (never in the caller's time), and never throws.
   */
  observe(event: string, fields: Record<string, unknown>): void {
    try {
      const kind = notificationEventOf(event);
      if (kind === null || this.channelsFor(kind).length === 0) return;
      const at = this.deps.clock.now();
      const seen = { ...fields };
      const queued = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => this.enqueue(event, seen, kind, at))
        .catch((error: unknown) => this.deps.log('notification_not_queued', { notification: kind, error: this.scrubbed(error) }));
      this.pending.add(queued);
      void queued.finally(() => this.pending.delete(queued));
    } catch (error) {
      try {
        this.deps.log('notification_not_queued', { log_event: event, error: this.scrubbed(error) });
      } catch {
        // The engine's log is its own business: a notification never stops it.
      }
    }
  }

  /** Resolves once everything observed so far is queued (or failed to be). */
  async queued(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private channelsFor(kind: NotificationEvent): string[] {
    return Object.entries(this.deps.config.channels).filter(([, channel]) => subscribes(channel, kind)).map(([name]) => name);
  }

  private async enqueue(event: string, fields: Record<string, unknown>, kind: NotificationEvent, at: number): Promise<void> {
    const summary = kind === 'batch_settled' && typeof fields.batch === 'string' ? await this.summaryOf(fields.batch) : null;
    const notification = notificationFor(event, fields, summary);
    if (!notification) return;
    let added = false;
    for (const channel of this.channelsFor(kind)) {
      if (await this.deps.store.enqueueNotification({ channel, event: kind, dedupe_key: notification.dedupe_key, payload: payloadOf(notification, at), created_at: at })) {
        added = true;
        this.deps.log('notification_queued', { channel, notification: kind, dedupe_key: notification.dedupe_key });
      }
    }
    if (added) this.wake();
  }

  /** The settled batch's counts; null (the notification says they could not be read) when the store fails. */
  private async summaryOf(batch: string): Promise<BatchSummary | null> {
    try {
      return await batchSummary(this.deps.store, batch);
    } catch (error) {
      this.deps.log('notification_summary_unread', { batch, error: this.scrubbed(error) });
      return null;
    }
  }

  /** Starts the delivery loop: what is due now at once, then whenever something is queued, a retry falls due, or `poll_ms` passed. */
  start(): void {
    this.loop ??= this.deliverUntilStopped();
  }

  /**
   * Stops the loop. Within `graceMs` what was observed is queued and what is due
   * is tried once more (a batch settled at the end of a run is told now); then
   * every send is cut off, and what is left waits in the outbox for the next
   * start. Never takes much longer than `graceMs`, even with a store that hangs.
   */
  async stop(graceMs = 0): Promise<void> {
    this.stopping = true;
    this.drain = graceMs > 0;
    const cutOff = setTimeout(() => this.stopSends.abort(), graceMs);
    this.wake();
    let late: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        (async () => {
          await this.queued();
          await this.loop;
        })(),
        new Promise<void>((resolve) => (late = setTimeout(resolve, graceMs + 500))),
      ]);
    } finally {
      clearTimeout(cutOff);
      clearTimeout(late);
      this.stopSends.abort();
    }
  }

  private async deliverUntilStopped(): Promise<void> {
    while (!this.stopping) {
      const free = MAX_IN_FLIGHT - this.inFlight.size;
      const claimed = free > 0 ? (await this.claimSafely(free)).length : 0;
      if (this.stopping) break;
      // Every slot busy: what is due waits for a send to end (each end wakes the loop). All claimed that could be: more may be due at once.
      if (free === 0) await this.sleep(this.deps.config.poll_ms);
      else if (claimed < free) await this.sleep(this.nextWaitMs());
    }
    // Stopping: what was observed is queued first, then what is due is tried once more, within the grace.
    await this.queued();
    if (this.drain && !this.stopSends.signal.aborted) await this.claimSafely(MAX_IN_FLIGHT - this.inFlight.size);
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Claims and starts sending what is due (`limit` at most), never throwing; returns the sends started. */
  private async claimSafely(limit: number): Promise<Promise<void>[]> {
    try {
      return await this.claimAndSend(limit);
    } catch (error) {
      this.deps.log('notification_outbox_error', { error: this.scrubbed(error) });
      return [];
    }
  }

  private async claimAndSend(limit: number): Promise<Promise<void>[]> {
    if (this.stopSends.signal.aborted || limit <= 0) return [];
    const now = this.deps.clock.now();
    this.retriesAt = this.retriesAt.filter((at) => at > now);
    const claimed = await this.deps.store.claimDueNotifications(now, now + this.claimMs, limit);
    return claimed.map((record) => {
      const sending = this.deliver(record).catch((error: unknown) => {
        // The store failed to record the outcome: the claim runs out and the notification is sent again (at least once).
        this.deps.log('notification_outbox_error', { id: record.id, channel: record.channel, error: this.scrubbed(error) });
      }).finally(() => {
        this.inFlight.delete(sending);
        this.wake();
      });
      this.inFlight.add(sending);
      return sending;
    });
  }

  /** One pass, for tests and tools: claims what is due now, sends it and records how each went. Returns how many were claimed. */
  async deliverDue(): Promise<number> {
    const sends = await this.claimAndSend(MAX_IN_FLIGHT - this.inFlight.size);
    await Promise.all(sends);
    return sends.length;
  }

  private async deliver(record: NotificationRecord): Promise<void> {
    const sender = this.deps.senders.get(record.channel);
    if (!sender) return this.giveUp(record, record.attempts + 1, `channel ${record.channel} is no longer configured`);
    const outgoing = outgoingOf(record);
    if (typeof outgoing === 'string') return this.giveUp(record, record.attempts + 1, outgoing);
    try {
      await sender.send(outgoing, this.stopSends.signal);
    } catch (error) {
      return this.failed(record, outgoing.attempt, error);
    }
    await this.deps.store.markNotificationDelivered(record.id, this.deps.clock.now());
    this.deps.log('notification_sent', { ...this.named(record), attempt: outgoing.attempt });
  }

  private async failed(record: NotificationRecord, attempt: number, error: unknown): Promise<void> {
    const message = this.scrubbed(error);
    const now = this.deps.clock.now();
    // Cut off by a stop: not the receiver's fault, so never the reason to give up; tried again at the next start.
    if (this.stopSends.signal.aborted) {
      await this.deps.store.markNotificationFailed(record.id, message, now, now);
      this.deps.log('notification_failed', { ...this.named(record), attempt, error: message, next_attempt_at: new Date(now).toISOString() });
      return;
    }
    if (attempt >= this.policy.attempts) return this.giveUp(record, attempt, message);
    const next = now + backoffDelay(this.policy, attempt, this.deps.random ?? Math.random);
    await this.deps.store.markNotificationFailed(record.id, message, next, now);
    if (this.retriesAt.length < REMEMBERED_RETRIES) this.retriesAt.push(next);
    this.deps.log('notification_failed', { ...this.named(record), attempt, error: message, next_attempt_at: new Date(next).toISOString() });
  }

  private async giveUp(record: NotificationRecord, attempt: number, why: string): Promise<void> {
    await this.deps.store.markNotificationFailed(record.id, why, null, this.deps.clock.now());
    this.deps.log('notification_given_up', { ...this.named(record), attempts: attempt, error: why });
  }

  /** What a log line says of a notification (`event` is the log line's own): never its payload, never a channel's URL or secret. */
  private named(record: NotificationRecord): Record<string, unknown> {
    return { id: record.id, channel: record.channel, notification: record.event, dedupe_key: record.dedupe_key };
  }

  private scrubbed(error: unknown): string {
    // A DeliveryFailed is safe already; anything else (the store, a library) is scrubbed of every secret it might quote.
    return scrub(error instanceof Error ? error.message : String(error), this.deps.secrets ?? []);
  }

  /** Until the soonest retry this process set, never longer than poll_ms. */
  private nextWaitMs(): number {
    const soonest = Math.min(...this.retriesAt);
    return Math.max(0, Math.min(this.deps.config.poll_ms, soonest - this.deps.clock.now()));
  }

  private wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private async sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    });
    this.wakeUp = null;
    this.woken = false;
  }
}

/** The engine's log, telling the notifier what it logs: the line is written first, the notification queued later. */
export function notifyingLog(log: PipelineLog, notifier: Pick<Notifier, 'observe'>): PipelineLog {
  return (event, fields) => {
    log(event, fields);
    notifier.observe(event, fields);
  };
}
