/**
 * The soak's webhook receiver: a node:http server in the soak's process that verifies every
 * message with the official standardwebhooks library and answers 204 (400 when it does not verify).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedCounts {
  verified: number;
  unverified: number;
  /** Messages whose webhook-id came again. */
  again: number;
  /** Verified messages by type. */
  readonly types: Map<string, number>;
}

export const noneReceived = (): ReceivedCounts => ({ verified: 0, unverified: 0, again: 0, types: new Map() });

export class SoakReceiver {
  private webhook: Webhook | null = null;
  private readonly seen = new Set<string>();
  private readonly server: Server;

  /** `counts()` gives the counts the next message adds to (the current minute's). */
  private constructor(private readonly counts: () => ReceivedCounts) {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const counts = this.counts();
        const id = String(request.headers['webhook-id'] ?? '');
        try {
          if (this.webhook === null) throw new Error('no secret yet');
          // The raw body: a re-serialized one would not match its signature.
          const message = this.webhook.verify(Buffer.concat(chunks).toString('utf8'), request.headers as Record<string, string>) as { type?: string };
          response.writeHead(204).end();
          counts.verified += 1;
          if (this.seen.has(id)) counts.again += 1;
          this.seen.add(id);
          const type = String(message.type);
          counts.types.set(type, (counts.types.get(type) ?? 0) + 1);
        } catch {
          response.writeHead(400).end();
          counts.unverified += 1;
        }
      });
    });
  }

  static async start(counts: () => ReceivedCounts): Promise<SoakReceiver> {
    const receiver = new SoakReceiver(counts);
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  /** The endpoint's signing secret, once `webhooks add` has made it. */
  useSecret(secret: string): void {
    this.webhook = new Webhook(secret);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
