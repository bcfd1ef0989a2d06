import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { outputOf } from './child-output.js';
import type { BenchContext } from './target.js';

export interface Load {
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
  /** Requests answered. */
  readonly requests: number;
  /** Answers by HTTP status, when asked for with `countStatuses` (it costs the load generator time). */
  readonly statuses?: Record<string, number>;
}

export interface DriveOptions {
  readonly countStatuses?: boolean;
}

export const LOAD_CONNECTIONS = 50;
/** Requests rotate through this many SKUs; keys rotate through all of the catalog's keys. */
const SKUS_IN_ROTATION = 100;

/** wrk (C, one thread) when installed, since it leaves the most CPU to measure; else autocannon. */
export function loadGenerator(): 'wrk' | 'autocannon' {
  return spawnSync('wrk', ['--version']).error === undefined ? 'wrk' : 'autocannon';
}

export async function drive(generator: 'wrk' | 'autocannon', base: string, context: BenchContext, seconds: number, pinned: boolean, options: DriveOptions = {}): Promise<Load> {
  return generator === 'wrk' ? driveWrk(base, context, seconds, pinned, options) : driveAutocannon(base, context, seconds, pinned);
}

function rotation(context: BenchContext): { paths: string[]; keys: readonly string[] } {
  return { paths: context.catalog.skus.slice(0, SKUS_IN_ROTATION).map((s) => `/api/v1/public/sku/${s}`), keys: context.catalog.keys };
}

/**
 * wrk's own thread states count the answers by status; `done` runs in another state, so it reads
 * them through the threads `setup` saw.
 */
const COUNT_STATUSES_LUA = `
local threads = {}
setup = function(thread) table.insert(threads, thread) end
statuses = {}
response = function(status) statuses[status] = (statuses[status] or 0) + 1 end
local function statusesJson()
  local all = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do all[status] = (all[status] or 0) + n end
  end
  local parts = {}
  for status, n in pairs(all) do table.insert(parts, string.format('"%d":%d', status, n)) end
  return ',"statuses":{' .. table.concat(parts, ',') .. '}'
end
`;

/** For a script that does not count answers by status. */
export const NO_STATUSES_LUA = 'local function statusesJson() return "" end';

/** wrk's `done`: the figures as one JSON line after `RESULT`, which runWrk reads. Needs a `statusesJson` function. */
const RESULT_LUA = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nRESULT {"requests":%d,"us":%d,"p50":%d,"p99":%d,"errors":%d%s}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout + e.status, statusesJson()))
end
`;

async function driveWrk(base: string, context: BenchContext, seconds: number, pinned: boolean, { countStatuses = false }: DriveOptions): Promise<Load> {
  const { paths, keys } = rotation(context);
  const script = join(context.dir, 'rotate.lua');
  return runWrk(base, script, `${countStatuses ? COUNT_STATUSES_LUA : NO_STATUSES_LUA}
local paths = {${paths.map((p) => `"${p}"`).join(',')}}
local keys = {${keys.map((k) => `"Bearer ${k}"`).join(',')}}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1], { ["Authorization"] = keys[(i % #keys) + 1] })
end
`, seconds, pinned);
}

/**
 * wrk at LOAD_CONNECTIONS connections (on the load core when pinned), with `lua` written to `script`
 * and the `done` that reports the figures after it: `lua` makes each request and defines
 * `statusesJson` (COUNT_STATUSES_LUA, or NO_STATUSES_LUA).
 */
export async function runWrk(base: string, script: string, lua: string, seconds: number, pinned: boolean): Promise<Load> {
  writeFileSync(script, `${lua}${RESULT_LUA}`);
  const wrk = ['wrk', '-t1', `-c${LOAD_CONNECTIONS}`, `-d${seconds}s`, '-s', script, base];
  const output = await outputOf(pinned ? ['taskset', '-c', '1', ...wrk] : wrk);
  const json = /RESULT (\{.*\})/.exec(output)?.[1];
  if (json === undefined) throw new Error(`wrk printed no result: ${output}`);
  const r = JSON.parse(json) as { requests: number; us: number; p50: number; p99: number; errors: number; statuses?: Record<string, number> };
  return { rps: r.requests / (r.us / 1e6), p50Ms: r.p50 / 1000, p99Ms: r.p99 / 1000, errors: r.errors, requests: r.requests, ...(r.statuses === undefined ? {} : { statuses: r.statuses }) };
}

async function driveAutocannon(base: string, context: BenchContext, seconds: number, pinned: boolean): Promise<Load> {
  const { paths, keys } = rotation(context);
  const requests = keys.map((key, i) => ({ method: 'GET', path: paths[i % paths.length]!, headers: { Authorization: `Bearer ${key}` } }));
  return runAutocannon(join(context.dir, 'autocannon.json'), { url: base, duration: seconds, requests }, pinned);
}

/**
 * autocannon at LOAD_CONNECTIONS connections in a process of its own (bench/autocannon-runner.mjs,
 * on the load core when pinned), with `options` as autocannon takes them (or with the runner's
 * `randomSku` instead of `requests`), written to `file`.
 */
export async function runAutocannon(file: string, options: Record<string, unknown>, pinned: boolean): Promise<Load> {
  writeFileSync(file, JSON.stringify({ ...options, connections: LOAD_CONNECTIONS }));
  const runner = [process.execPath, 'bench/autocannon-runner.mjs', file];
  const output = await outputOf(pinned ? ['taskset', '-c', '1', ...runner] : runner);
  const r = JSON.parse(output) as {
    requests: { average: number; total: number }; latency: { p50: number; p99: number }; errors: number; non2xx: number; statusCodeStats: Record<string, { count: number }>;
  };
  const statuses = Object.fromEntries(Object.entries(r.statusCodeStats).map(([status, { count }]) => [status, count]));
  return { rps: r.requests.average, p50Ms: r.latency.p50, p99Ms: r.latency.p99, errors: r.errors + r.non2xx, requests: r.requests.total, statuses };
}
