/**
 * Operator controls under `/_sandbox/`: outside the service interface, no
 * signature needed. Tests and rehearsals use them to set balances, switch
 * corridors and faults, read the ledger and delivery log, and move time.
 */
import type { CallWindows } from './call-windows.js';
import type { FaultConfig, SandboxConfig } from './config.js';
import { describeIssues, mergeDeep } from '../config/json.js';
import { faultConfigSchema } from './config.js';
import type { Reply } from './reply.js';
import { failure, invalid, reply } from './reply.js';
import { Router } from './router.js';
import type { ApiHandler } from './api-routes.js';
import type { SandboxService } from './service.js';
import type { SandboxStore } from './store.js';

export class FaultSettings {
  constructor(
    private readonly store: SandboxStore,
    private readonly defaults: FaultConfig,
  ) {}

  current(): FaultConfig {
    return this.store.setting<FaultConfig>('faults') ?? this.defaults;
  }

  /** Merges a partial fault profile into the current one, or says why it is not valid. */
  update(partial: unknown): { faults: FaultConfig } | { error: string } {
    const parsed = faultConfigSchema.safeParse(mergeDeep(this.current(), partial));
    if (!parsed.success) return { error: describeIssues('fault profile', parsed.error) };
    this.store.setSetting('faults', parsed.data);
    return { faults: parsed.data };
  }
}

const asObject = (body: unknown): Record<string, unknown> =>
  (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>;

const page = (query: URLSearchParams): [number, number] => [
  Math.max(0, Number(query.get('after') ?? 0) || 0),
  Math.min(100_000, Math.max(1, Number(query.get('limit') ?? 10_000) || 10_000)),
];

export function operatorRoutes(
  service: SandboxService,
  store: SandboxStore,
  faults: FaultSettings,
  config: SandboxConfig,
  calls: CallWindows,
): Router<ApiHandler> {
  const time = (): Reply => reply(200, { now: new Date(service.now()).toISOString(), now_ms: service.now() });
  return new Router<ApiHandler>()
    .on('GET', '/_sandbox/balances', () => reply(200, store.balances()))
    .on('PUT', '/_sandbox/balances', ({ body }) => {
      const entries = Object.entries(asObject(body));
      const bad = entries.filter(([currency, amount]) => !/^[A-Z]{3}$/.test(currency) || typeof amount !== 'string' || !/^\d+$/.test(amount));
      if (bad.length > 0) return invalid({ balances: ['give {"CUR": "minor units as an integer string"}'] });
      for (const [currency, amount] of entries) service.setBalance(currency, BigInt(amount as string));
      return reply(200, store.balances());
    })
    .on('GET', '/_sandbox/corridors', () => reply(200, service.corridors()))
    .on('PUT', '/_sandbox/corridors/:id', ({ params, body }) => {
      const active = asObject(body).active;
      if (typeof active !== 'boolean') return invalid({ active: ['must be true or false'] });
      if (!service.setCorridorActive(params.id as string, active)) return failure(404, `corridor ${params.id} not found`);
      return reply(200, service.corridors().find((c) => c.id === params.id));
    })
    .on('GET', '/_sandbox/faults', () => reply(200, faults.current()))
    .on('PUT', '/_sandbox/faults', ({ body }) => {
      const result = faults.update(body);
      return 'error' in result ? invalid({ faults: [result.error] }) : reply(200, result.faults);
    })
    .on('DELETE', '/_sandbox/faults', () => {
      faults.update(config.faults);
      return reply(200, faults.current());
    })
    // Calls per one-second window, per endpoint and overall (call-windows.ts); DELETE starts the count over.
    .on('GET', '/_sandbox/call-windows', () => reply(200, calls.figures()))
    .on('DELETE', '/_sandbox/call-windows', () => {
      calls.reset();
      return reply(200, calls.figures());
    })
    .on('GET', '/_sandbox/ledger', ({ query }) => reply(200, store.ledger(...page(query))))
    .on('GET', '/_sandbox/deliveries', ({ query }) => reply(200, store.deliveries(...page(query))))
    .on('GET', '/_sandbox/transactions', ({ query }) => {
      const [offset, limit] = page(query);
      const all: unknown[] = [];
      let index = 0;
      for (const tx of store.allTransactions()) {
        if (index++ < offset) continue;
        if (all.length >= limit) break;
        all.push(tx);
      }
      return reply(200, all);
    })
    .on('PUT', '/_sandbox/transactions/:id/state', ({ params, body }) =>
      service.forceTransactionState(params.id as string, String(asObject(body).state)))
    .on('PUT', '/_sandbox/senders/:external_id/state', ({ params, body }) =>
      service.setSenderState(params.external_id as string, String(asObject(body).state)))
    .on('GET', '/_sandbox/time', time)
    .on('POST', '/_sandbox/time/advance', ({ body }) => {
      const ms = asObject(body).ms;
      if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0) return invalid({ ms: ['must be a whole number of milliseconds, 0 or more'] });
      const steps = service.advanceTime(ms);
      return reply(200, { ...(time().body as object), steps_applied: steps });
    });
}
