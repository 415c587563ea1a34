/**
 * Applies the webhook events the receiver stored, oldest first: a transaction's
 * new state goes through the pipeline like a read would (funding it when it
 * became approved), a sender's approval releases the rows waiting on it, its
 * rejection stops them [3.3]. Events of one object are applied in the order
 * received; different objects at once. An event is marked applied only after its
 * effect is recorded, so after a crash it is applied again, which is harmless:
 * an older state never replaces a newer one, and every step is guarded by the
 * row's phase.
 */
import { parseTransaction } from '../api/answers.js';
import type { Clock } from '../clock.js';
import type { Pipeline, PipelineLog } from '../engine/pipeline.js';
import type { PipelineRow, PipelineStore, WebhookEvent, WebhookStore } from '../store/port.js';
import { parseDelivery } from './webhook-delivery.js';
import { isNotCreatedYet, isSenderStopped } from '../payout-states.js';

const PAGE = 200;

export interface ApplierDeps {
  store: PipelineStore & WebhookStore;
  pipeline: Pick<Pipeline, 'applyWebhook' | 'readSoon' | 'stopForSender'>;
  clock: Clock;
  log: PipelineLog;
  /** Several workers: events are claimed, so that each is applied by one worker (whichever worker's receiver kept it). */
  claim?: (limit: number) => Promise<WebhookEvent[]>;
}

export class EventApplier {
  private running: Promise<void> | null = null;
  private again = false;

  constructor(private readonly deps: ApplierDeps) {}

  /** New events were stored: apply them (once the current pass ends, if one runs). */
  notify(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    // A pass that fails (the database went away) leaves its events stored, unapplied: the next notify takes them up
    // (the daemon's loop notifies every few seconds), and polling covers their rows meanwhile.
    this.running = this.drain().catch((error: unknown) => {
      this.deps.log('webhook_apply_deferred', { reason: (error as Error).message });
    }).finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.notify();
      }
    });
  }

  /** Resolves when every stored event has been applied. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    for (;;) {
      const events = this.deps.claim ? await this.deps.claim(PAGE) : await this.deps.store.unappliedWebhookEvents(PAGE);
      if (events.length === 0) return;
      const byObject = new Map<string, WebhookEvent[]>();
      for (const event of events) {
        const key = event.object_id ?? `event-${event.id}`;
        const ofObject = byObject.get(key);
        if (ofObject) ofObject.push(event);
        else byObject.set(key, [event]);
      }
      await Promise.all([...byObject.values()].map(async (ofOneObject) => {
        for (const event of ofOneObject) {
          let outcome: string;
          try {
            outcome = await this.apply(event);
          } catch (error) {
            // Kept for the next pass (or the next start); polling covers the row meanwhile.
            this.deps.log('webhook_apply_failed', { webhook_event: event.id, event_type: event.event_type, reason: (error as Error).message });
            return;
          }
          await this.deps.store.recordWebhookOutcome(event.id, outcome, new Date(this.deps.clock.now()).toISOString());
        }
      }));
      if (events.length < PAGE) return;
    }
  }

  private async apply(event: WebhookEvent): Promise<string> {
    const delivery = parseDelivery(JSON.parse(event.body) as unknown);
    if (typeof delivery === 'string') return 'unreadable';
    if (!delivery.known) {
      this.deps.log('webhook_ignored', { webhook_event: event.id, event_type: delivery.eventType, reason: 'not an event type paybatch knows' });
      return 'unknown_event_type';
    }
    const [kind, state] = delivery.eventType.split('.') as [string, string];
    return kind === 'sender' ? this.applySender(event, state, delivery.data) : this.applyTransaction(event, delivery.data);
  }

  private async applyTransaction(event: WebhookEvent, data: Record<string, unknown>): Promise<string> {
    const { store, pipeline } = this.deps;
    const tx = parseTransaction(data);
    const id = tx?.id ?? event.object_id;
    const externalId = tx?.external_id ?? (typeof data.external_id === 'string' ? data.external_id : null);
    let row = id ? await store.rowByTransaction(id) : undefined;
    // Found by external_id with another transaction id: the decision holds the row (an answer that is not its own).
    if (!row && externalId) row = await store.rowBySubmittedExternalId(externalId);
    if (!row) {
      this.deps.log('webhook_unknown_object', { webhook_event: event.id, event_type: event.event_type, transaction: id });
      return 'unknown_transaction';
    }
    // Being created: the create's own answer, or its lookup, tells the state; nothing is moved from here.
    if (isNotCreatedYet(row.phase)) return 'row_not_created_yet';
    if (!tx) {
      // The event says something changed without the whole transaction: read it now.
      await pipeline.readSoon(row);
      return 'read_requested';
    }
    // Older than what the row knows, after final, not its own: the engine's one decision says.
    return pipeline.applyWebhook(row, tx);
  }

  private async applySender(event: WebhookEvent, state: string, data: Record<string, unknown>): Promise<string> {
    const externalId = typeof data.external_id === 'string' ? data.external_id : null;
    const rows: PipelineRow[] = externalId ? await this.deps.store.rowsWaitingOnSender(externalId) : [];
    if (rows.length === 0) {
      // A sender paybatch does not know, or none of whose rows waits: kept, and said.
      this.deps.log('webhook_no_rows_waiting', { webhook_event: event.id, event_type: event.event_type, sender: externalId });
      return 'no_rows_waiting';
    }
    if (state === 'approved') {
      // Released: a read brings each transaction's state and quote, and funding follows the usual checks.
      for (const row of rows) await this.deps.pipeline.readSoon(row);
      this.deps.log('sender_approved', { webhook_event: event.id, rows: rows.length });
      return 'released';
    }
    if (isSenderStopped(state)) {
      await Promise.all(rows.map((row) => this.deps.pipeline.stopForSender(row, state)));
      this.deps.log('sender_stopped', { webhook_event: event.id, state, rows: rows.length });
      return 'stopped';
    }
    return 'noted';
  }
}
