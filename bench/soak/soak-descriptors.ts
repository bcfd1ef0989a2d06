import { readdirSync } from 'node:fs';

/** How often the service's descriptors are counted. */
const EVERY_MS = 5_000;

/**
 * The service's open descriptors, counted from /proc every few seconds, and the least of each
 * minute: a scrape's one reading holds whatever sockets the requests in flight had open at that
 * moment (47 to 75 from one minute to the next at 200 requests/s), where a leak raises the least.
 */
export class DescriptorSampler {
  private least = Number.POSITIVE_INFINITY;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    this.sample();
    this.timer = setInterval(() => this.sample(), EVERY_MS);
    this.timer.unref();
  }

  /** The least count since the last call (NaN where /proc cannot be read), and a new minute begun. */
  takeLeast(): number {
    this.sample();
    const least = this.least;
    this.least = Number.POSITIVE_INFINITY;
    return Number.isFinite(least) ? least : Number.NaN;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sample(): void {
    try {
      this.least = Math.min(this.least, readdirSync(`/proc/${this.pid}/fd`).length);
    } catch {
      // not Linux, or the process gone: the minute has no count
    }
  }
}
