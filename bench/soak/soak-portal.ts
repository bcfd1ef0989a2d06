/**
 * A partner admin using the portal as a browser would: one invitation accepted at the start, then
 * at each visit a sign-in, the key made at the last visit revoked, a new key made (and handed to
 * the traffic), a test event sent to the webhook endpoint, and a sign-out.
 */
import { exchangeOnce, type RawAnswer } from '../../test/support/hostile-clients.js';
import { HeldKey } from './soak-traffic.js';

const PASSWORD = 'soak password, long enough';
const PAGES = { login: '/portal/login', logout: '/portal/logout', apiKeys: '/portal/settings/api-keys', webhooks: '/portal/settings/webhooks' } as const;

/** Sees every portal answer with the statuses it should have been. */
export type PortalRecorder = (what: string, status: number, expected: readonly number[]) => void;

/** A browser's cookies for one site. */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(answer: RawAnswer): void {
    const lines = answer.headers['set-cookie'] ?? [];
    for (const line of Array.isArray(lines) ? lines : [lines]) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
  }

  get header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export class PortalAdmin {
  /** The key this admin made at the last visit, revoked at the next. */
  private lastKey: HeldKey | null = null;

  constructor(
    private readonly base: string,
    private readonly email: string,
    private readonly endpointId: string,
    private readonly record: PortalRecorder,
  ) {}

  /** Accepts an invitation (its link's token) with the admin's password, and signs out. */
  async acceptInvitation(token: string): Promise<void> {
    const jar = new CookieJar();
    const path = `/portal/invite/${encodeURIComponent(token)}`;
    const csrf = await this.formToken(jar, path, 'invitation page');
    await this.post(jar, path, { password: PASSWORD, confirm: PASSWORD, csrf }, 'invitation accepted');
    await this.post(jar, PAGES.logout, { csrf: await this.formToken(jar, `${PAGES.apiKeys}/new`, 'new key page') }, 'sign-out');
  }

  /** One visit; the key it made, or null when none could be made. */
  async visit(): Promise<{ made: HeldKey | null; revoked: HeldKey | null }> {
    const jar = new CookieJar();
    const loginCsrf = await this.formToken(jar, PAGES.login, 'sign-in page');
    // Without a session every page would send the admin back to sign in: the visit ends here.
    if (!await this.post(jar, PAGES.login, { email: this.email, password: PASSWORD, csrf: loginCsrf }, 'sign-in')) return { made: null, revoked: null };
    const csrf = await this.formToken(jar, `${PAGES.apiKeys}/new`, 'new key page');
    const revoking = this.lastKey;
    let revoked: HeldKey | null = null;
    if (revoking !== null) {
      revoking.revoking();
      if (await this.post(jar, `${PAGES.apiKeys}/${encodeURIComponent(revoking.id)}/revoke`, { csrf }, 'key revoked')) {
        revoking.revoked();
        revoked = revoking;
      } else {
        revoking.notRevoked(); // revoked at the next visit instead
      }
    }
    let made: HeldKey | null = null;
    if (await this.post(jar, PAGES.apiKeys, { label: `soak portal ${new Date().toISOString()}`, mode: 'live', csrf }, 'key made')) {
      const page = await this.get(jar, PAGES.apiKeys, 'keys page');
      const id = /Key id: <code>([^<]+)<\/code>/.exec(page.text)?.[1];
      const key = /id="new-key" type="text" readonly value="([^"]+)"/.exec(page.text)?.[1];
      if (id !== undefined && key !== undefined) made = new HeldKey(key, id);
    }
    if (revoked !== null || revoking === null) this.lastKey = made;
    await this.post(jar, `${PAGES.webhooks}/${encodeURIComponent(this.endpointId)}/test`, { csrf }, 'test event');
    await this.post(jar, PAGES.logout, { csrf }, 'sign-out');
    return { made, revoked };
  }

  private async formToken(jar: CookieJar, path: string, what: string): Promise<string> {
    const page = await this.get(jar, path, what);
    return /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
  }

  private async get(jar: CookieJar, path: string, what: string): Promise<RawAnswer> {
    const answer = await this.exchange(`${this.base}${path}`, { headers: { Cookie: jar.header } });
    jar.take(answer);
    this.record(`portal ${what}`, answer.status, [200]);
    return answer;
  }

  /** Every form the portal takes answers 303 (see other) when it is done; whether it did. */
  private async post(jar: CookieJar, path: string, fields: Record<string, string>, what: string): Promise<boolean> {
    const answer = await this.exchange(`${this.base}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: jar.header },
      body: new URLSearchParams(fields).toString(),
    });
    jar.take(answer);
    this.record(`portal ${what}`, answer.status, [303]);
    return answer.status === 303;
  }

  private exchange(url: string, options: Parameters<typeof exchangeOnce>[1]): Promise<RawAnswer> {
    return exchangeOnce(url, { ...options, timeoutMs: 15_000 }).catch(() => ({ status: 0, headers: {}, text: '', ms: 0 }));
  }
}
