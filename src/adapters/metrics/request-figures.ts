import type { KeyMode } from '../../domain/api-key.js';

/**
 * Upper bounds of the request duration buckets, in seconds: a lookup is answered in about a
 * millisecond, one that reads the database in a few, a held-back answer after a second, and
 * nothing is allowed much past the 10 s shutdown grace.
 */
export const DURATION_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The requests of one route, counted as plain numbers: recording one costs a map update and a
 * short scan, with nothing allocated once its status has been seen. A prom-client child would
 * hash its label object again on every call (about a microsecond for a counter and a histogram,
 * some 3 % of a lookup on memory storage); the figures are handed to prom-client at scrape time.
 */
export class RouteFigures {
  /** Requests per status answered, but those made with a test key. */
  readonly statuses = new Map<number, number>();
  /** Requests per status answered to a test key: kept apart, so live traffic reads true. */
  readonly testStatuses = new Map<number, number>();
  /** Requests per duration bucket, not cumulative; the last counts those above every bound. */
  readonly buckets = new Float64Array(DURATION_BUCKETS.length + 1);
  /** Seconds, all requests together. */
  sum = 0;

  observe(status: number, seconds: number, mode: KeyMode): void {
    const statuses = mode === 'test' ? this.testStatuses : this.statuses;
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket += 1;
    this.buckets[bucket] = this.buckets[bucket]! + 1;
    this.sum += seconds;
  }
}

/** One line of an exposition, as prom-client's registry formats it. */
interface ExposedValue {
  readonly metricName: string;
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
}

/**
 * A histogram by route, drawn from the routes' figures when scraped, for a prom-client registry.
 * prom-client's Histogram has no way to be handed counts made elsewhere, but its registry formats
 * any object that answers `get()` with its values (its own cluster aggregation registers such
 * objects), so the text format and its escaping stay prom-client's.
 */
export class RouteDurationHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly routes: ReadonlyMap<string, RouteFigures>,
  ) {}

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: ExposedValue[] }> {
    const values: ExposedValue[] = [];
    for (const [route, figures] of this.routes) {
      let cumulative = 0;
      DURATION_BUCKETS.forEach((bound, index) => {
        cumulative += figures.buckets[index]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { route, le: bound }, value: cumulative });
      });
      const count = cumulative + figures.buckets[DURATION_BUCKETS.length]!;
      values.push(
        { metricName: `${this.name}_bucket`, labels: { route, le: '+Inf' }, value: count },
        { metricName: `${this.name}_sum`, labels: { route }, value: figures.sum },
        { metricName: `${this.name}_count`, labels: { route }, value: count },
      );
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }
}
