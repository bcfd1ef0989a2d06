import { Writable } from 'node:stream';
import { createLogger } from '../../src/adapters/logging/logger.js';
import { createPortalApp } from '../../src/adapters/portal/portal-app.js';
import type { PortalUseCases } from '../../src/adapters/portal/portal-parts.js';
import type { PortalRequestObserver } from '../../src/adapters/portal/request-log.js';
import { startPortalServer } from '../../src/adapters/portal/portal-server.js';
import { KeyUsageRecorder } from '../../src/application/access/key-usage.js';
import type { KeyChangeAnnouncer } from '../../src/application/keys/api-key-admin.js';
import { createContainer, TOKENS, type AdminInfrastructure, type WebhookInfrastructure } from '../../src/composition/container.js';
import type { PortalWorld } from './portal-world.js';

export interface TestPortal {
  readonly url: string;
  readonly logs: string[];
  readonly usage: KeyUsageRecorder;
  close(): Promise<void>;
}

/** The real portal on an ephemeral port, over a world's adapters, its log lines captured. */
export async function startTestPortal(
  world: Pick<PortalWorld, 'clock' | 'keys' | 'admin' | 'webhooks'> & { announcer: KeyChangeAnnouncer },
  /**
   * `useCases`: the use cases that stand in for the world's own, as a full hash gate's;
   * `allowPrivateTargets`: WEBHOOK_ALLOW_PRIVATE_TARGETS, for a receiver on loopback; `metrics`: where its requests are counted.
   */
  options: { secureCookies?: boolean; publicUrl?: string; useCases?: Partial<PortalUseCases>; allowPrivateTargets?: boolean; metrics?: PortalRequestObserver } = {},
): Promise<TestPortal> {
  const logs: string[] = [];
  const logger = createLogger('info', new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
      done();
    },
  }));
  const usage = new KeyUsageRecorder(world.clock);
  const infrastructure: AdminInfrastructure = { keys: world.keys, ...world.admin, announcer: world.announcer, usage, clock: world.clock };
  const webhooks: WebhookInfrastructure = { ...world.webhooks, allowPrivateTargets: options.allowPrivateTargets ?? false };
  const app = createPortalApp({ ...createContainer({ admin: infrastructure, webhooks }).get(TOKENS.PortalUseCases), ...options.useCases }, {
    logger, secureCookies: options.secureCookies ?? false, clock: world.clock, ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  });
  const server = await startPortalServer(app, { port: 0, host: '127.0.0.1', publicUrl: options.publicUrl ?? null });
  return { url: server.url, logs, usage, close: () => server.close(1_000) };
}

export interface PortalResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly location: string | null;
  readonly setCookies: string[];
}

/** A browser's part, by hand: a cookie jar, forms sent urlencoded, redirects not followed. */
export class PortalClient {
  readonly jar = new Map<string, string>();

  constructor(private readonly base: string) {}

  async get(path: string): Promise<PortalResponse> {
    return this.send('GET', path);
  }

  async post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<PortalResponse> {
    return this.send('POST', path, new URLSearchParams(fields).toString(), { 'Content-Type': 'application/x-www-form-urlencoded', ...headers });
  }

  /** The CSRF token of the page's first form. */
  static csrfOf(page: PortalResponse): string {
    const token = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1];
    if (token === undefined) throw new Error(`no CSRF field in: ${page.text.slice(0, 500)}`);
    return token;
  }

  async send(method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<PortalResponse> {
    const cookie = [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(`${this.base}${path}`, {
      method, ...(body === undefined ? {} : { body }), redirect: 'manual', headers: { ...headers, ...(cookie === '' ? {} : { Cookie: cookie }) }, signal: AbortSignal.timeout(10_000),
    });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (/max-age=0/i.test(line)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return { status: response.status, headers: response.headers, text: await response.text(), location: response.headers.get('location'), setCookies };
  }
}
