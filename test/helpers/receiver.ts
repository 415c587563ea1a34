/**
 * A webhook receiver for tests. It checks every delivery's signature itself
 * [D3], with its own HMAC code rather than the sandbox's, and records it.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- arbitrary JSON from the wire
  signatureValid: boolean;
  headers: Record<string, string | string[] | undefined>;
}

export interface Receiver {
  uri: string;
  deliveries: ReceivedDelivery[];
  /** The transaction states delivered for one transaction id, in order. */
  statesOf(transactionId: string): string[];
  stop(): Promise<void>;
}

export async function startReceiver(secret: string, answer = 200): Promise<Receiver> {
  const deliveries: ReceivedDelivery[] = [];
  let uri = '';
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const nonce = String(req.headers['authorization-nonce']);
      const bodyHash = createHash('sha512').update(raw).digest('hex');
      const expected = createHmac('sha512', secret).update(`${nonce}&POST&${uri}&${bodyHash}`).digest('hex');
      deliveries.push({ body: JSON.parse(raw.toString('utf8')), signatureValid: expected === req.headers['authorization-signature'], headers: req.headers });
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/paybatch/webhooks`;
  return {
    uri,
    deliveries,
    statesOf: (id) =>
      deliveries
        .filter((d) => d.body.data?.id === id && d.body.event_type !== 'transaction.paid_out')
        .map((d) => String(d.body.event_type).replace('transaction.', '')),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
