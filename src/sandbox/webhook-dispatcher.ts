/**
 * [6], [D3], [D14] Delivers each event once to the webhook registered for its
 * type, signed; never retried. Every attempt is written to the delivery log,
 * which the operator controls expose.
 */
import { request } from 'undici';
import type { SandboxConfig } from './config.js';
import type { EventSink, ServiceEvent } from './events.js';
import type { Random } from './random.js';
import { signedHeaders } from './signature.js';
import type { SandboxStore, WebhookRecord } from './store.js';

interface Delivery {
  webhook: WebhookRecord;
  event: ServiceEvent;
}

export class WebhookDispatcher implements EventSink {
  private readonly queue: Delivery[] = [];
  private running = 0;
  private idleWaiters: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly store: SandboxStore,
    private readonly config: SandboxConfig,
    private readonly random: Random,
    private readonly now: () => number,
    private readonly log: (line: string) => void,
  ) {}

  wants(eventType: string): boolean {
    return !this.closed && this.store.webhookForEvent(eventType) !== undefined;
  }

  publish(event: ServiceEvent): void {
    if (this.closed) return;
    const webhook = this.store.webhookForEvent(event.eventType);
    if (!webhook) return;
    this.queue.push({ webhook, event });
    this.pump();
  }

  /** Resolves once every queued delivery has been attempted. */
  idle(): Promise<void> {
    if (this.queue.length === 0 && this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  close(): void {
    this.closed = true;
    this.queue.length = 0;
  }

  private pump(): void {
    while (this.running < this.config.webhooks.concurrency && this.queue.length > 0) {
      const next = this.queue.shift() as Delivery;
      this.running += 1;
      void this.deliver(next).finally(() => {
        this.running -= 1;
        this.pump();
        if (this.queue.length === 0 && this.running === 0) {
          const waiters = this.idleWaiters;
          this.idleWaiters = [];
          waiters.forEach((resolve) => resolve());
        }
      });
    }
  }

  private body({ webhook, event }: Delivery): string {
    return JSON.stringify(
      this.config.live_style
        ? { webhook: webhook.id, event: event.eventType, object: event.data }
        : { webhook_id: webhook.id, event_type: event.eventType, data: event.data },
    );
  }

  private async deliver(delivery: Delivery): Promise<void> {
    const { webhook, event } = delivery;
    const record = { at: this.now(), webhook_id: webhook.id, event_type: event.eventType, object_id: event.objectId, uri: webhook.uri };
    if (this.random.chance(this.config.faults.webhook_drop_rate)) {
      this.save({ ...record, outcome: 'dropped', http_status: null, error: 'dropped by fault injection' });
      return;
    }
    const body = this.body(delivery);
    try {
      const response = await request(webhook.uri, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signedHeaders(this.config.api_key, this.config.api_secret, 'POST', webhook.uri, body) },
        body,
        headersTimeout: this.config.webhooks.timeout_ms,
        bodyTimeout: this.config.webhooks.timeout_ms,
      });
      await response.body.dump();
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      if (!ok) this.log(`webhook ${event.eventType} for ${event.objectId} to ${webhook.uri} answered ${response.statusCode}; not retried`);
      this.save({ ...record, outcome: ok ? 'delivered' : 'failed', http_status: response.statusCode, error: null });
    } catch (error) {
      this.log(`webhook ${event.eventType} for ${event.objectId} to ${webhook.uri} failed: ${(error as Error).message}; not retried`);
      this.save({ ...record, outcome: 'failed', http_status: null, error: (error as Error).message });
    }
  }

  private save(delivery: Parameters<SandboxStore['recordDelivery']>[0]): void {
    if (!this.closed) this.store.recordDelivery(delivery);
  }
}
