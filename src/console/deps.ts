/**
 * What the console's server hands its routes (routes.ts, actions.ts, live.ts):
 * the store, the configuration and what it may do, the session cookie's name,
 * and the viewer fastify carries on each request. Apart from server.ts, which
 * registers those routes, so that they need not import it back.
 */
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { PipelineLog } from '../engine/pipeline.js';
import type { ApprovalStore, AuditStore, ConsoleStore, DuplicateStore, IntakeStore, PipelineStore, WebhookStore } from '../store/port.js';
import type { Workspace } from '../workspace/workspace.js';
import type { PayoutClient } from '../api/client.js';
import type { Viewer } from './views/layout.js';

export type ConsoleStoreNeeds = IntakeStore & PipelineStore & WebhookStore & AuditStore & ApprovalStore & ConsoleStore & DuplicateStore;

/** What the console can do besides reading: only where paybatch runs beside it (`watch`). */
export interface ConsoleActions {
  /** Cancels one row's payout, as `paybatch cancel` would; `by` is kept with its reason. */
  cancel(batch: string, line: number, by: string): Promise<{ done: boolean; state: string; reason: string }>;
  /** The service, for the corridors switched off now in an approval's preview. */
  client: Pick<PayoutClient, 'listCorridors'> | null;
}

export interface ConsoleDeps {
  store: ConsoleStoreNeeds;
  config: Config;
  clock: Clock;
  workspace: Workspace;
  log: PipelineLog;
  /** null: a read-only console. */
  actions: ConsoleActions | null;
  /** The Prometheus exposition, served at /metrics when given. */
  metrics?: { contentType: string; scrape(): Promise<string> } | null;
}

export const SESSION_COOKIE = 'paybatch_session';

declare module 'fastify' {
  interface FastifyRequest {
    viewer: Viewer | null;
    /** The session cookie's token, once the server's preHandler has found it good; null on the open routes. */
    sessionToken: string | null;
  }
  interface FastifyReply {
    /** The CSRF token for this page's forms: bound to the session, or before one to the sign-in cookie (csrf.ts). */
    generateCsrf(): string;
  }
  interface FastifyInstance {
    /** A route's preHandler: refuses (403) a form whose token is not bound to this request's session (csrf.ts). */
    csrfProtection(request: FastifyRequest): Promise<void>;
  }
  interface FastifyContextConfig {
    /** Served without signing in (the sign-in page, assets, metrics). */
    open?: boolean;
  }
}
