import { createServer, Socket } from 'node:net';

/** A TCP proxy of a test's own, in front of a real server, that can cut the path like a partition. */
export interface TcpProxy {
  readonly port: number;
  /**
   * Packets dropped, not refused: connections are still accepted but never answered, and the
   * ones already open stay open with nothing forwarded either way, for good (their bytes are lost).
   */
  blackHole(): void;
  /**
   * The open connections whose bytes sent so far (with `capture`) satisfy `test` go dark as in
   * `blackHole`, for good; the others and new ones are forwarded as before.
   */
  blackHoleWhere(test: (sent: string) => boolean): void;
  /** New connections are forwarded again; the ones lost in the black hole stay silent. */
  restore(): void;
  /** From now on, what the server sends reaches the client this much later, in order: a slow path or a slow server. */
  delay(ms: number): void;
  /**
   * Another server behind the same address, as a managed service's failover leaves it: the open
   * connections are reset, and new ones reach `target`.
   */
  switchTo(target: { host: string; port: number }): void;
  /** With `capture`, the bytes each connection sent towards the server while it was forwarded. */
  sent(): readonly (readonly Buffer[])[];
  /** Bytes of the server's that have reached the clients so far (held ones not yet). */
  delivered(): number;
  /** Told of every chunk a client sends towards the server, as it comes. */
  onSent(listener: (chunk: Buffer) => void): void;
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket | null;
  readonly sent: Buffer[];
  lost: boolean;
  /** Chunks held back towards the client, in order, each with when it is due. */
  readonly held: { chunk: Buffer; at: number }[];
}

export async function startTcpProxy(target: { host: string; port: number }, options: { capture?: boolean } = {}): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  const captured: Buffer[][] = [];
  let blackHoled = false;
  let delayMs = 0;
  let delivered = 0;
  const listeners: ((chunk: Buffer) => void)[] = [];
  let behind = target;
  const server = createServer((client) => {
    const upstream = blackHoled ? null : new Socket().connect(behind.port, behind.host);
    const pair: Pair = { client, upstream, sent: [], lost: blackHoled, held: [] };
    pairs.add(pair);
    if (options.capture === true) captured.push(pair.sent);
    const end = (): void => {
      client.destroy();
      upstream?.destroy();
      pairs.delete(pair);
    };
    client.on('data', (chunk: Buffer) => {
      if (pair.lost) return;
      if (options.capture === true) pair.sent.push(chunk);
      for (const listener of listeners) listener(chunk);
      upstream?.write(chunk);
    });
    // Held chunks go out in order, whatever the delay was when each came: a shorter one never overtakes.
    // Each goes out after the I/O already waiting is read: where this process was held up past the
    // delay, what the client sent meanwhile is seen before the chunk it could not yet have read.
    const release = (): void => {
      const now = performance.now();
      while (pair.held.length > 0 && pair.held[0]!.at <= now) {
        const { chunk } = pair.held.shift()!;
        setImmediate(() => {
          if (pair.lost || client.destroyed) return;
          delivered += chunk.length;
          client.write(chunk);
        });
      }
      if (pair.held.length > 0) setTimeout(release, pair.held[0]!.at - now);
    };
    upstream?.on('data', (chunk: Buffer) => {
      if (pair.lost) return;
      if (delayMs === 0 && pair.held.length === 0) {
        delivered += chunk.length;
        client.write(chunk);
        return;
      }
      pair.held.push({ chunk, at: performance.now() + delayMs });
      if (pair.held.length === 1) setTimeout(release, delayMs);
    });
    // A lost pair's sockets stay open whatever the other side does, as across a real partition.
    client.on('error', end).on('close', () => { if (!pair.lost) end(); });
    upstream?.on('error', () => { if (!pair.lost) end(); }).on('close', () => { if (!pair.lost) end(); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    blackHole: () => {
      blackHoled = true;
      for (const pair of pairs) pair.lost = true;
    },
    blackHoleWhere: (test) => {
      for (const pair of pairs) if (test(Buffer.concat(pair.sent).toString('latin1'))) pair.lost = true;
    },
    restore: () => {
      blackHoled = false;
    },
    delay: (ms) => {
      delayMs = ms;
    },
    switchTo: (next) => {
      behind = next;
      for (const pair of pairs) {
        pair.client.resetAndDestroy();
        pair.upstream?.destroy();
      }
      pairs.clear();
    },
    sent: () => captured,
    delivered: () => delivered,
    onSent: (listener) => {
      listeners.push(listener);
    },
    close: async () => {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
      pairs.clear();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
