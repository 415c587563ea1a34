/**
 * A TCP proxy in front of a server (PostgreSQL, for the tests of the database
 * going away): cut() destroys every connection through it and refuses new ones
 * (each is accepted and closed at once, as a server going down does);
 * restore() lets them through again. The server itself is never restarted.
 */
import { createConnection, createServer } from 'node:net';
import type { Socket } from 'node:net';

export interface TcpProxy {
  /** The port it listens on, on 127.0.0.1. */
  port: number;
  /** Connections made through it so far (accepted while not cut). */
  readonly connections: number;
  /** Every connection through it ended, new ones closed as they arrive. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function tcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let isCut = false;
  let connections = 0;
  const server = createServer((client) => {
    if (isCut) {
      client.destroy();
      return;
    }
    connections += 1;
    const upstream = createConnection(target);
    open.add(client);
    open.add(upstream);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP port');
  return {
    port: address.port,
    get connections() {
      return connections;
    },
    cut() {
      isCut = true;
      for (const socket of [...open]) socket.destroy();
      open.clear();
    },
    restore() {
      isCut = false;
    },
    close() {
      isCut = true;
      for (const socket of [...open]) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The server a database URL names (PostgreSQL's port when it names none). */
export function addressOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || 5432) };
}

/** The same database URL, through the proxy. */
export function proxiedUrl(url: string, proxy: Pick<TcpProxy, 'port'>): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(proxy.port);
  return parsed.toString();
}
