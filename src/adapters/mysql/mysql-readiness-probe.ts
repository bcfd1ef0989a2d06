import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { ReadinessProbe } from '../../application/common/readiness-probe.js';
import { TIMEOUTS } from '../timeouts.js';
import type { Database } from './database.js';

/** Ready when `SELECT 1` answers within the timeout; logs only when readiness changes. */
export class MysqlReadinessProbe implements ReadinessProbe {
  private ready = true;

  private readonly timeoutMs: number;
  private readonly logger: Logger | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    options: { readonly timeoutMs?: number; readonly logger?: Logger | undefined } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? TIMEOUTS.readinessProbeMs;
    this.logger = options.logger;
  }

  async isReady(): Promise<boolean> {
    const ready = await this.probe();
    if (ready !== this.ready) {
      this.ready = ready;
      if (ready) this.logger?.info('database reachable again');
      else this.logger?.warn('database unreachable');
    }
    return ready;
  }

  private async probe(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => { resolve(false); }, this.timeoutMs);
    });
    const answered = sql`select 1`.execute(this.db).then(() => true, () => false);
    try {
      return await Promise.race([answered, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}
