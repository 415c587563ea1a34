/**
 * `startSandbox(options)`: the simulated payout service, in-process. Used by
 * `paybatch sandbox`, by paybatch itself when no service is configured (the
 * embedded default), and by the tests.
 */
import type { AddressInfo } from 'node:net';
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import { apiRoutes } from './api-routes.js';
import { CallWindows } from './call-windows.js';
import type { SandboxConfig, SandboxConfigInput } from './config.js';
import { loadSandboxConfig } from './config.js';
import { createSandboxServer } from './http-server.js';
import { FaultSettings, operatorRoutes } from './operator-routes.js';
import { seededRandom } from './random.js';
import { SandboxService } from './service.js';
import { SandboxStore } from './store.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';

export interface SandboxOptions {
  /** A JSON file merged over the defaults. */
  configFile?: string;
  /** Merged over the file: what a test or the CLI sets. */
  config?: SandboxConfigInput;
  /** A SQLite file that keeps state across restarts; in memory when absent. */
  dbFile?: string;
  clock?: Clock;
  /** Whether a timer applies due steps by itself; tests with a manual clock may turn it off. */
  autoTick?: boolean;
  log?: (line: string) => void;
  /** How an injected latency is waited out (a timer of its length by default): a test resolves it when it chooses. */
  latency?: (ms: number) => Promise<unknown>;
}

export interface RunningSandbox {
  /** Base URL of the service interface, including the version prefix [D1]. */
  url: string;
  /** Root of the operator controls, `.../_sandbox`. */
  operatorUrl: string;
  port: number;
  apiKey: string;
  apiSecret: string;
  config: SandboxConfig;
  service: SandboxService;
  store: SandboxStore;
  /** Calls to the interface per one-second window, per endpoint (also at GET /_sandbox/call-windows). */
  calls: CallWindows;
  /** Moves sandbox time forward and applies every step that became due. */
  advance(ms: number): number;
  /** Resolves once every queued webhook delivery was attempted. */
  deliveriesSettled(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const config = loadSandboxConfig({ file: options.configFile, overrides: options.config });
  const log = options.log ?? (() => {});
  const store = new SandboxStore(options.dbFile ?? ':memory:');
  const random = seededRandom(config.seed);
  const clock = options.clock ?? systemClock;
  // The dispatcher stamps deliveries with sandbox time, which the service owns.
  const dispatcher: WebhookDispatcher = new WebhookDispatcher(store, config, random, (): number => service.now(), log);
  const service: SandboxService = new SandboxService({ store, config, clock, random, events: dispatcher });
  const faults = new FaultSettings(store, config.faults);
  const calls = new CallWindows();
  const server = createSandboxServer({
    config,
    store,
    api: apiRoutes(service, store),
    operator: operatorRoutes(service, store, faults, config, calls),
    faults,
    calls,
    random,
    log,
    latency: options.latency,
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const timer = options.autoTick === false ? undefined : setInterval(() => service.tick(), config.tick_ms);
  timer?.unref();
  service.tick();

  return {
    url: `http://${host}:${port}${config.base_path}`,
    operatorUrl: `http://${host}:${port}/_sandbox`,
    port,
    apiKey: config.api_key,
    apiSecret: config.api_secret,
    config,
    service,
    store,
    calls,
    advance: (ms) => service.advanceTime(ms),
    deliveriesSettled: () => dispatcher.idle(),
    async stop() {
      if (timer) clearInterval(timer);
      dispatcher.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      store.close();
    },
  };
}
