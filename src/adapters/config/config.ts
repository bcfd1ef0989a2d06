import { existsSync } from 'node:fs';
import { DEFAULT_RATE_LIMIT_PER_MINUTE } from '../../domain/rate-limit.js';
import { DEFAULT_RETRY_SCHEDULE_SECONDS, parseRetrySchedule } from '../../domain/webhook-retries.js';
import { listenerSettings, type ListenerSettings } from './listener-config.js';
import { redisSettings, type RedisSettings } from './redis-config.js';
import { ConfigError, flag, httpUrl, integer, oneOf, text, type Env } from './setting-values.js';
import type { TracingSettings } from '../tracing/tracing-settings.js';
import { tracingSettings } from './tracing-config.js';
import { cacheTtlMs, storageSettings, type StorageSettings } from './storage-config.js';

/** The service's settings (docs/decisions.md, configuration), validated, by section. */
export interface Config {
  readonly listeners: ListenerSettings;
  readonly storage: StorageSettings;
  /** Where Redis is and how to log in, from REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES; null without any. */
  readonly redis: RedisSettings | null;
  readonly rateLimits: RateLimitSettings;
  readonly cache: CacheSettings;
  readonly webhooks: WebhookSettings;
  readonly openapi: OpenApiSettings;
  readonly logLevel: LogLevel;
  /** Traces over OTLP (the OTEL_* variables); null while off, as by default. */
  readonly tracing: TracingSettings | null;
}

export interface RateLimitSettings {
  /** Where requests are counted: in this process, or in Redis, shared by every instance. */
  readonly store: 'memory' | 'redis';
  readonly perMinute: number;
  /** Most keys the in-process rate limiter tracks at once (memory stays bounded whatever the traffic). */
  readonly maxKeys: number;
  /** Failed authentications one client address may have per minute before it is held back. */
  readonly authFailuresPerMinute: number;
}

/** The in-process response cache. */
export interface CacheSettings {
  readonly ttlMs: number;
  /** Most lookup answers the cache holds at once. */
  readonly maxEntries: number;
  /** Most bytes the cache's answers may take, as it counts them; with maxEntries, the first reached evicts. */
  readonly maxBytes: number;
}

export interface WebhookSettings {
  /** Webhook endpoints may be `http` and name loopback, private and other non-public addresses: development and tests only. */
  readonly allowPrivateTargets: boolean;
  /** How long one webhook attempt may take, from resolving the name to the answer's head. */
  readonly timeoutMs: number;
  /** Webhook attempts in flight at once in this instance. */
  readonly concurrency: number;
  /** The waits between a message's attempts, in seconds. */
  readonly retrySchedule: readonly number[];
  /** How often each instance looks for webhook deliveries that are due. */
  readonly pollMs: number;
}

export interface OpenApiSettings {
  /** Whom partners contact about the API: the OpenAPI document's `info.contact`. */
  readonly contact: { readonly name: string; readonly email: string | null; readonly url: string | null };
  /** The partner agreement's address: the document's licence and terms; null points them at the docs page. */
  readonly termsUrl: string | null;
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Loads `.env` from the working directory (never overriding the real environment). */
export function loadDotEnv(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path);
}

/** Every section read and checked; the first bad setting stops the read, named in a ConfigError. */
export function readConfig(env: Env): Config {
  const rateLimits = rateLimitSettings(env);
  const storage = storageSettings(env, rateLimits.store);
  return {
    listeners: listenerSettings(env, storage.kind),
    storage,
    redis: redisSettings(env, rateLimits.store),
    rateLimits,
    cache: cacheSettings(env),
    webhooks: webhookSettings(env),
    openapi: openapiSettings(env),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    tracing: tracingSettings(env),
  };
}

function rateLimitSettings(env: Env): RateLimitSettings {
  return {
    store: oneOf(env, 'RATE_LIMIT_STORE', ['memory', 'redis'] as const, 'memory'),
    perMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', DEFAULT_RATE_LIMIT_PER_MINUTE, 1, 1_000_000_000),
    maxKeys: integer(env, 'RATE_LIMIT_MAX_KEYS', 100_000, 1, 100_000_000),
    authFailuresPerMinute: integer(env, 'AUTH_FAILURES_PER_MINUTE', 30, 1, 1_000_000_000),
  };
}

const MIB = 1_048_576;

function cacheSettings(env: Env): CacheSettings {
  return {
    ttlMs: cacheTtlMs(env),
    maxEntries: integer(env, 'CACHE_MAX_ENTRIES', 200_000, 1, 100_000_000),
    // 512 MiB holds every answer a 30 s TTL keeps alive at 3,000 Zipf lookups a second (docs/decisions.md).
    // Half of what is counted lives on V8's heap, whose default limit is about 4 GB: 4 GiB at most.
    maxBytes: integer(env, 'CACHE_MAX_BYTES', 512 * MIB, MIB, 4_096 * MIB),
  };
}

function webhookSettings(env: Env): WebhookSettings {
  return {
    allowPrivateTargets: flag(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS'),
    timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 1_000, 120_000),
    concurrency: integer(env, 'WEBHOOK_CONCURRENCY', 16, 1, 256),
    retrySchedule: retrySchedule(env),
    pollMs: integer(env, 'WEBHOOK_POLL_MS', 500, 100, 60_000),
  };
}

function retrySchedule(env: Env): readonly number[] {
  const value = text(env, 'WEBHOOK_RETRY_SCHEDULE');
  if (value === null) return DEFAULT_RETRY_SCHEDULE_SECONDS;
  const schedule = parseRetrySchedule(value);
  if ('problem' in schedule) throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', `must be seconds separated by commas: ${schedule.problem}`);
  return schedule;
}

function openapiSettings(env: Env): OpenApiSettings {
  return {
    contact: {
      name: displayName(env, 'OPENAPI_CONTACT_NAME') ?? 'API support',
      email: emailAddress(env, 'OPENAPI_CONTACT_EMAIL'),
      url: httpUrl(env, 'OPENAPI_CONTACT_URL'),
    },
    termsUrl: httpUrl(env, 'OPENAPI_TERMS_URL'),
  };
}

/** A name shown to people: at most 100 characters, none of them a control character; null when unset. */
function displayName(env: Env, name: string): string | null {
  const value = text(env, name);
  if (value === null) return null;
  if (value.length > 100 || /\p{Cc}/u.test(value)) throw new ConfigError(name, `must be at most 100 characters, without control characters; got ${JSON.stringify(value)}`);
  return value;
}

/** An e-mail address (`name@domain.tld`, no spaces or angle brackets); null when unset. */
function emailAddress(env: Env, name: string): string | null {
  const value = text(env, name);
  if (value === null) return null;
  if (value.length > 254 || !/^[^\s@<>()",;]+@[^\s@<>()",;]+\.[^\s@<>()",;.]+$/.test(value)) {
    throw new ConfigError(name, `must be an e-mail address such as api-support@example.com; got ${JSON.stringify(value)}`);
  }
  return value;
}
