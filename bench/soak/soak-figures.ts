/**
 * The soak's figures: the service's own, scraped from its Prometheus endpoint once a minute (so
 * prom-client's event-loop delay histogram, reset at each scrape, covers that minute), beside what
 * the traffic saw; each figure's slope over the last two thirds of the run, and the verdict.
 */

/** The service's figures at one scrape; NaN for one it does not export. */
export interface ServiceFigures {
  readonly rssMb: number;
  readonly heapUsedMb: number;
  readonly externalMb: number;
  /** From the scrape; the soak puts the minute's least count in its line instead (DescriptorSampler). */
  readonly openFds: number;
  readonly loopP99Ms: number;
  readonly poolConnections: number;
  readonly cacheEntries: number;
  readonly cacheMb: number;
}

/** One minute's line: the service's figures at its end and what its requests came to. */
export interface MinuteFigures extends ServiceFigures {
  readonly minute: number;
  readonly requests: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The bound of the service's own duration bucket holding its p99 for the minute's API requests. */
  readonly serviceP99Ms: number;
  readonly fiveXx: number;
  readonly unexpected: number;
  readonly hooks: number;
  /** The blips (`redis`, `db`) the minute contains: its errors are counted apart. */
  readonly blips: readonly string[];
}

const MB = 1024 * 1024;

/** Sums every series of each metric in a Prometheus text exposition. */
export function sumsOf(exposition: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of exposition.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (match === null) continue;
    sums.set(match[1]!, (sums.get(match[1]!) ?? 0) + Number(match[3]));
  }
  return sums;
}

/** The API routes' request-duration histogram, summed over routes: the count at or under each bound (seconds). */
export function apiDurationBuckets(exposition: string): Map<number, number> {
  const buckets = new Map<number, number>();
  for (const match of exposition.matchAll(/^pcat_http_request_duration_seconds_bucket\{route="\/api\/[^"]*",le="([^"]+)"\} (\S+)$/gm)) {
    const le = match[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(match[1]);
    buckets.set(le, (buckets.get(le) ?? 0) + Number(match[2]));
  }
  return buckets;
}

/**
 * The bound of the bucket holding the p99 of the requests counted between two scrapes of the
 * histogram: the service's own view of its tail, from arrival to the write of the answer.
 */
export function p99Bound(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Number.POSITIVE_INFINITY) ?? 0) - (before.get(Number.POSITIVE_INFINITY) ?? 0);
  if (total <= 0) return Number.NaN;
  return (bounds.find((le) => after.get(le)! - (before.get(le) ?? 0) >= 0.99 * total) ?? Number.NaN) * 1_000;
}

export async function scrape(url: string): Promise<{ figures: ServiceFigures; apiBuckets: Map<number, number> }> {
  const exposition = await (await fetch(url)).text();
  const sums = sumsOf(exposition);
  const figure = (name: string): number => sums.get(name) ?? Number.NaN;
  return { apiBuckets: apiDurationBuckets(exposition), figures: {
    rssMb: figure('process_resident_memory_bytes') / MB,
    heapUsedMb: figure('nodejs_heap_size_used_bytes') / MB,
    externalMb: figure('nodejs_external_memory_bytes') / MB,
    openFds: figure('process_open_fds'),
    loopP99Ms: figure('nodejs_eventloop_lag_p99_seconds') * 1_000,
    poolConnections: figure('pcat_db_pool_connections'),
    cacheEntries: figure('pcat_response_cache_entries'),
    cacheMb: figure('pcat_response_cache_bytes') / MB,
  } };
}

/** The figures the slopes and the verdict read, with how each is printed. */
const TRENDED: ReadonlyArray<{ key: keyof ServiceFigures | 'p50Ms' | 'p99Ms'; name: string; unit: string; digits: number }> = [
  { key: 'rssMb', name: 'RSS', unit: 'MB', digits: 1 },
  { key: 'heapUsedMb', name: 'heap used', unit: 'MB', digits: 1 },
  { key: 'externalMb', name: 'external', unit: 'MB', digits: 2 },
  { key: 'openFds', name: 'open descriptors (least)', unit: '', digits: 1 },
  { key: 'loopP99Ms', name: 'event-loop delay p99', unit: 'ms', digits: 1 },
  { key: 'poolConnections', name: 'pool connections', unit: '', digits: 1 },
  { key: 'cacheEntries', name: 'cache entries', unit: '', digits: 0 },
  { key: 'cacheMb', name: 'cache bytes', unit: 'MB', digits: 2 },
  { key: 'p50Ms', name: 'request p50', unit: 'ms', digits: 2 },
  { key: 'p99Ms', name: 'request p99', unit: 'ms', digits: 2 },
];

/** Under this growth per hour, as a share of its level, RSS, heap and descriptors are flat. */
const FLAT_PERCENT_PER_HOUR = 1;
/** The last third's p99 (median of its minutes) may be at most this many times the middle third's. */
const P99_STABLE_RATIO = 1.5;

export const HEADER = 'min   RSS MB  heap MB  ext MB  fds  loop p99 ms  pool  cache n  cache MB   requests  p50 ms  p99 ms  svc p99 <=  5xx  unexpected  hooks  blip';

export function minuteLine(m: MinuteFigures): string {
  const cells = [
    String(m.minute).padStart(3), fixed(m.rssMb, 1, 8), fixed(m.heapUsedMb, 1, 8), fixed(m.externalMb, 2, 7), fixed(m.openFds, 0, 4),
    fixed(m.loopP99Ms, 1, 11), fixed(m.poolConnections, 0, 5), fixed(m.cacheEntries, 0, 7), fixed(m.cacheMb, 2, 9),
    String(m.requests).padStart(10), fixed(m.p50Ms, 2, 7), fixed(m.p99Ms, 2, 7), fixed(m.serviceP99Ms, 1, 11), String(m.fiveXx).padStart(4), String(m.unexpected).padStart(11),
    String(m.hooks).padStart(6), m.blips.length === 0 ? '' : ` ${m.blips.join('+')}`,
  ];
  return cells.join(' ').trimEnd();
}

const fixed = (x: number, digits: number, width: number): string => (Number.isNaN(x) ? 'n/a' : x.toFixed(digits)).padStart(width);

/** The least-squares slope of y over x; NaN for fewer than two points. */
export function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const valid = points.filter(([, y]) => !Number.isNaN(y));
  if (valid.length < 2) return Number.NaN;
  const meanX = valid.reduce((s, [x]) => s + x, 0) / valid.length;
  const meanY = valid.reduce((s, [, y]) => s + y, 0) / valid.length;
  const sxy = valid.reduce((s, [x, y]) => s + (x - meanX) * (y - meanY), 0);
  const sxx = valid.reduce((s, [x]) => s + (x - meanX) ** 2, 0);
  return sxy / sxx;
}

const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** Prints each figure's slope over the last two thirds and the verdict; whether the run was flat. */
export function report(minutes: readonly MinuteFigures[], print: (line: string) => void): boolean {
  const tail = minutes.slice(Math.floor(minutes.length / 3));
  print('');
  print(`slopes over the last two thirds (minutes ${tail[0]?.minute ?? '-'} to ${tail.at(-1)?.minute ?? '-'}, least squares, per hour):`);
  const percentPerHour = new Map<string, number>();
  for (const { key, name, unit, digits } of TRENDED) {
    const points = tail.map((m) => [m.minute / 60, m[key]] as const);
    const perHour = slope(points);
    const level = mean(points.map(([, y]) => y).filter((y) => !Number.isNaN(y)));
    const percent = (100 * perHour) / level;
    percentPerHour.set(key, percent);
    const sign = perHour >= 0 ? '+' : '';
    print(`  ${name.padEnd(22)} mean ${level.toFixed(digits).padStart(9)} ${unit.padEnd(2)}  slope ${sign}${perHour.toFixed(digits + 1).padStart(9)} ${unit}/h  ${sign}${percent.toFixed(2)} %/h`);
  }

  const growing = ['rssMb', 'heapUsedMb', 'openFds'].filter((key) => !(percentPerHour.get(key)! < FLAT_PERCENT_PER_HOUR));
  const thirds = [minutes.slice(Math.floor(minutes.length / 3), Math.floor((2 * minutes.length) / 3)), minutes.slice(Math.floor((2 * minutes.length) / 3))];
  const [middle, last] = thirds.map((third) => median((third.some((m) => m.blips.length === 0) ? third.filter((m) => m.blips.length === 0) : third).map((m) => m.p99Ms)));
  const p99Stable = !(last! > P99_STABLE_RATIO * middle!);
  const quiet = minutes.filter((m) => m.blips.length === 0);
  const blipped = minutes.filter((m) => m.blips.length > 0);
  const fiveXx = quiet.reduce((s, m) => s + m.fiveXx, 0);
  const unexpected = quiet.reduce((s, m) => s + m.unexpected, 0);
  const flat = growing.length === 0 && p99Stable && fiveXx === 0 && unexpected === 0;

  print('');
  print(`RSS, heap used and open descriptors: ${growing.length === 0 ? `each under ${FLAT_PERCENT_PER_HOUR} %/h` : `${growing.map((key) => TRENDED.find((t) => t.key === key)!.name).join(', ')} at or over ${FLAT_PERCENT_PER_HOUR} %/h (or not read)`}`);
  print(`request p99: median of the last third's minutes ${last!.toFixed(2)} ms against the middle third's ${middle!.toFixed(2)} ms: ${p99Stable ? 'stable' : `more than ${P99_STABLE_RATIO}x`} (blip minutes left out where others remain)`);
  print(`outside the blips: ${fiveXx} 5xx and ${unexpected} unexpected statuses in ${quiet.reduce((s, m) => s + m.requests, 0)} requests; ` +
    `in the blip minutes (${blipped.map((m) => `${m.minute}: ${m.blips.join('+')}`).join(', ') || 'none'}): ${blipped.reduce((s, m) => s + m.fiveXx, 0)} 5xx and ${blipped.reduce((s, m) => s + m.unexpected, 0)} unexpected`);
  print(`verdict: ${flat ? 'FLAT' : 'NOT FLAT'}`);
  return flat;
}
