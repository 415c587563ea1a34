/** [4] and [D7] The service interface's endpoints, relative to the base path. */
import type { Reply } from './reply.js';
import { failure } from './reply.js';
import { Router } from './router.js';
import type { Params } from './router.js';
import type { SandboxService } from './service.js';
import type { SandboxStore } from './store.js';
import { deleteWebhook, listWebhooks, registerWebhook } from './webhook-registry.js';

export interface ApiRequest {
  params: Params;
  query: URLSearchParams;
  body: unknown;
}

export type ApiHandler = (request: ApiRequest) => Reply;

export function apiRoutes(service: SandboxService, store: SandboxStore): Router<ApiHandler> {
  return new Router<ApiHandler>()
    .on('GET', '/corridors/:country', ({ params }) => service.listCorridors(params.country as string))
    .on('POST', '/transactions', ({ body }) => service.createTransaction(body))
    .on('GET', '/transactions', ({ query }) => {
      const externalId = query.get('external_id');
      return externalId ? service.findTransactions(externalId) : failure(400, 'the external_id query parameter is required');
    })
    .on('GET', '/transactions/:id', ({ params }) => service.getTransaction(params.id as string))
    .on('DELETE', '/transactions/:id', ({ params }) => service.cancelTransaction(params.id as string))
    .on('POST', '/transactions/:id/fund', ({ params, body }) => service.fundTransaction(params.id as string, body))
    .on('POST', '/webhooks', ({ body }) => registerWebhook(store, body, service.now()))
    .on('GET', '/webhooks', () => listWebhooks(store))
    .on('DELETE', '/webhooks/:id', ({ params }) => deleteWebhook(store, params.id as string));
}
