import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { readConfig } from '../../src/adapters/config/config.js';
import { ConfigError } from '../../src/adapters/config/setting-values.js';

function errorOf(env: Record<string, string>): ConfigError {
  try {
    readConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', function () {
  it('has the documented defaults (docs/decisions.md, configuration)', function () {
    expect(readConfig({})).to.deep.equal({
      listeners: {
        role: 'all',
        api: { port: 3000, host: '127.0.0.1', publicBaseUrl: null, maxConnections: 4_096, maxConnectionsPerAddress: 32 },
        portal: { port: 3001, host: '127.0.0.1', publicUrl: null, secureCookies: false },
        metrics: { port: 9464, host: '127.0.0.1' },
        trustedProxies: [],
        shutdownDrainMs: 5_000,
      },
      storage: {
        kind: 'memory', catalogFile: null, databaseUrl: null, poolSize: 10, tls: { enabled: false, caFile: null }, replicas: { urls: [], waitMs: 1_000 }, cursorSecret: null,
      },
      redis: null,
      rateLimits: { store: 'memory', perMinute: 100, maxKeys: 100_000, authFailuresPerMinute: 30 },
      cache: { ttlMs: 30_000, maxEntries: 200_000, maxBytes: 536_870_912 },
      webhooks: { allowPrivateTargets: false, timeoutMs: 15_000, concurrency: 16, retrySchedule: [5, 300, 1800, 7200, 18000, 36000, 36000], pollMs: 500 },
      openapi: { contact: { name: 'API support', email: null, url: null }, termsUrl: null },
      logLevel: 'info',
      tracing: null,
    });
  });

  /** The variables read by the files of src/adapters/config. */
  const readVariables = (): string[] => readdirSync('src/adapters/config')
    .flatMap((file) => [...readFileSync(`src/adapters/config/${file}`, 'utf8').matchAll(/\(env, '([A-Z_]+)'/g)].map((match) => match[1]!));
  /** The text of a Markdown file's `## <heading>` section, up to the next `## ` heading. */
  const section = (file: string, heading: string): string => readFileSync(file, 'utf8').split(`\n## ${heading}\n`)[1]?.split('\n## ')[0] ?? '';

  it('documents every variable it reads in the table of docs/configuration.md and in .env.example', function () {
    const read = readVariables();
    const table = section('docs/configuration.md', 'Variables');
    const example = readFileSync('.env.example', 'utf8');
    expect(read).to.include('CURSOR_SECRET');
    for (const name of read) {
      expect(table, name).to.match(new RegExp(`^\\| (\`[A-Z_]+\`, )*\`${name}\``, 'm'));
      expect(example, name).to.match(new RegExp(`^${name}=`, 'm'));
    }
  });

  it('keeps .env.example to comments and settings, the header first: a line of neither would be read as a setting', function () {
    const lines = readFileSync('.env.example', 'utf8').split('\n');
    expect(lines[0]).to.match(/^# Copy to \.env/);
    for (const line of lines) expect(line).to.match(/^(#( .*)?|[A-Z][A-Z0-9_]*=.*|)$/);
  });

  it('names in the README\'s configuration table only variables it reads, and links the full table', function () {
    const read = readVariables();
    const readme = section('README.md', 'Configuration');
    const named = [...readme.matchAll(/^\| ((?:`[A-Z_]+`(?:, )?)+) \|/gm)].flatMap((match) => [...match[1]!.matchAll(/`([A-Z_]+)`/g)].map((name) => name[1]!));
    expect(named).to.include.members(['PORT', 'STORAGE', 'DATABASE_URL', 'REDIS_URL']);
    expect(named.filter((name) => !read.includes(name)), 'variables the README names that the configuration does not read').to.deep.equal([]);
    expect(readme).to.include('](docs/configuration.md#variables)');
  });

  it('reads every variable', function () {
    const config = readConfig({
      PORT: '8080', HOST: '0.0.0.0', STORAGE: 'mysql', DATABASE_URL: 'mysql://u:p@db:3306/catalog', CATALOG_FILE: 'c.json',
      RATE_LIMIT_STORE: 'redis', REDIS_URL: 'redis://cache:6379', RATE_LIMIT_PER_MINUTE: '500', CACHE_TTL_MS: '0', LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX_KEYS: '5000', CACHE_MAX_ENTRIES: '200', CACHE_MAX_BYTES: '1048576', MAX_CONNECTIONS: '900', MAX_CONNECTIONS_PER_ADDRESS: '40',
      AUTH_FAILURES_PER_MINUTE: '10', TRUSTED_PROXIES: ' 10.0.0.0/8, 192.0.2.1 ,fd00::/8', DATABASE_POOL_SIZE: '20',
    });
    expect(config.listeners.api).to.include({ port: 8080, host: '0.0.0.0', maxConnections: 900, maxConnectionsPerAddress: 40 });
    expect(config.storage).to.include({ kind: 'mysql', databaseUrl: 'mysql://u:p@db:3306/catalog', catalogFile: 'c.json', poolSize: 20 });
    expect(config.rateLimits).to.deep.equal({ store: 'redis', perMinute: 500, maxKeys: 5000, authFailuresPerMinute: 10 });
    expect(config.cache).to.deep.equal({ ttlMs: 0, maxEntries: 200, maxBytes: 1_048_576 });
    expect(config.logLevel).to.equal('warn');
    expect(config.listeners.trustedProxies).to.deep.equal(['10.0.0.0/8', '192.0.2.1', 'fd00::/8']);
  });

  it('runs the API without the portal with ROLE=api, and the portal alone with ROLE=portal on MySQL storage', function () {
    expect(readConfig({ ROLE: 'api' }).listeners).to.deep.include({ role: 'api', portal: { port: 0, host: '127.0.0.1', publicUrl: null, secureCookies: false } });
    expect(readConfig({ ROLE: 'portal', STORAGE: 'mysql', DATABASE_URL: 'mysql://u@db/c' }).listeners).to.deep.include({
      role: 'portal', portal: { port: 3001, host: '127.0.0.1', publicUrl: null, secureCookies: false },
    });
  });

  const bad: [Record<string, string>, string][] = [
    [{ PORT: 'eighty' }, 'PORT: must be a whole number'],
    [{ WEBHOOK_TIMEOUT_MS: '500' }, 'WEBHOOK_TIMEOUT_MS: must be a whole number from 1000 to 120000'],
    [{ WEBHOOK_CONCURRENCY: '0' }, 'WEBHOOK_CONCURRENCY: must be a whole number from 1 to 256'],
    [{ WEBHOOK_RETRY_SCHEDULE: '5,soon' }, 'WEBHOOK_RETRY_SCHEDULE: must be seconds separated by commas: wait 2 must be a whole number of seconds from 1 to 604800; got "soon"'],
    [{ PORT: '70000' }, 'PORT: must be a whole number from 0 to 65535'],
    [{ STORAGE: 'postgres' }, 'STORAGE: must be one of memory, mysql'],
    [{ STORAGE: 'mysql' }, 'DATABASE_URL: is required with STORAGE=mysql'],
    [{ STORAGE: 'mysql', DATABASE_URL: 'postgres://x' }, 'DATABASE_URL: must be a mysql:// URL'],
    [{ RATE_LIMIT_STORE: 'redis' }, 'REDIS_URL: is required with RATE_LIMIT_STORE=redis'],
    [{ RATE_LIMIT_PER_MINUTE: '0' }, 'RATE_LIMIT_PER_MINUTE: must be a whole number from 1'],
    [{ RATE_LIMIT_PER_MINUTE: '1.5' }, 'RATE_LIMIT_PER_MINUTE: must be a whole number'],
    [{ CACHE_TTL_MS: '-1' }, 'CACHE_TTL_MS: must be a whole number'],
    [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL: must be one of'],
    [{ RATE_LIMIT_MAX_KEYS: '0' }, 'RATE_LIMIT_MAX_KEYS: must be a whole number from 1'],
    [{ CACHE_MAX_ENTRIES: 'lots' }, 'CACHE_MAX_ENTRIES: must be a whole number'],
    [{ DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE: must be a whole number from 1 to 100; got "0"'],
    [{ DATABASE_POOL_SIZE: '101' }, 'DATABASE_POOL_SIZE: must be a whole number from 1 to 100; got "101"'],
    [{ CACHE_MAX_BYTES: '0' }, 'CACHE_MAX_BYTES: must be a whole number from 1048576 to 4294967296; got "0"'],
    [{ CACHE_MAX_BYTES: '-268435456' }, 'CACHE_MAX_BYTES: must be a whole number from 1048576 to 4294967296; got "-268435456"'],
    [{ CACHE_MAX_BYTES: '268435456.5' }, 'CACHE_MAX_BYTES: must be a whole number from 1048576 to 4294967296; got "268435456.5"'],
    [{ CACHE_MAX_BYTES: '256MiB' }, 'CACHE_MAX_BYTES: must be a whole number from 1048576 to 4294967296; got "256MiB"'],
    [{ CACHE_MAX_BYTES: '1048575' }, 'CACHE_MAX_BYTES: must be a whole number from 1048576 to 4294967296; got "1048575"'],
    [{ CACHE_MAX_BYTES: '4294967297' }, 'CACHE_MAX_BYTES: must be a whole number from 1048576 to 4294967296; got "4294967297"'],
    [{ CACHE_MAX_BYTES: '1e12' }, 'CACHE_MAX_BYTES: must be a whole number from 1048576 to 4294967296; got "1e12"'],
    [{ MAX_CONNECTIONS: '0' }, 'MAX_CONNECTIONS: must be a whole number from 1'],
    [{ MAX_CONNECTIONS_PER_ADDRESS: 'many' }, 'MAX_CONNECTIONS_PER_ADDRESS: must be a whole number'],
    [{ AUTH_FAILURES_PER_MINUTE: '0' }, 'AUTH_FAILURES_PER_MINUTE: must be a whole number from 1'],
    [{ TRUSTED_PROXIES: '10.0.0.1,proxy.internal' }, 'TRUSTED_PROXIES: must be IP addresses or CIDR blocks separated by commas; got "proxy.internal"'],
    [{ TRUSTED_PROXIES: '10.0.0.0/33' }, 'TRUSTED_PROXIES: must be IP addresses or CIDR blocks'],
    [{ TRUSTED_PROXIES: '10.0.0.0/8/1' }, 'TRUSTED_PROXIES: must be IP addresses or CIDR blocks'],
    [{ ROLE: 'worker' }, 'ROLE: must be one of all, api, portal; got "worker"'],
    [{ ROLE: 'portal' }, 'ROLE: portal needs STORAGE=mysql'],
    [{ ROLE: 'portal', STORAGE: 'mysql', DATABASE_URL: 'mysql://u@db/c', PORTAL_PORT: '0' }, 'ROLE: portal needs a PORTAL_PORT other than 0'],
    [{ METRICS_PORT: 'off' }, 'METRICS_PORT: must be a whole number from 0 to 65535; got "off"'],
    [{ METRICS_PORT: '65536' }, 'METRICS_PORT: must be a whole number from 0 to 65535'],
    [{ OPENAPI_CONTACT_NAME: 'x'.repeat(101) }, 'OPENAPI_CONTACT_NAME: must be at most 100 characters, without control characters'],
    [{ OPENAPI_CONTACT_NAME: 'API\tsupport' }, 'OPENAPI_CONTACT_NAME: must be at most 100 characters, without control characters; got "API\\tsupport"'],
    [{ OPENAPI_CONTACT_EMAIL: 'support' }, 'OPENAPI_CONTACT_EMAIL: must be an e-mail address such as api-support@example.com; got "support"'],
    [{ OPENAPI_CONTACT_EMAIL: 'API Support <support@example.com>' }, 'OPENAPI_CONTACT_EMAIL: must be an e-mail address'],
    [{ OPENAPI_CONTACT_URL: 'support.example.com' }, 'OPENAPI_CONTACT_URL: must be an absolute http:// or https:// URL; got "support.example.com"'],
    [{ OPENAPI_TERMS_URL: 'ftp://example.com/terms' }, 'OPENAPI_TERMS_URL: must be an absolute http:// or https:// URL'],
    [{ OTEL_TRACES_EXPORTER: 'jaeger' }, 'OTEL_TRACES_EXPORTER: must be one of otlp, none; got "jaeger"'],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL: must be one of http/protobuf, http/json; got "grpc"'],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1 (the share of traces kept); got "1.5"'],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'ratio' }, 'OTEL_TRACES_SAMPLER: must be one of always_on, always_off, traceidratio,'],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT: must be an absolute http:// or https:// URL'],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '20' }, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE: must be at most OTEL_BSP_MAX_QUEUE_SIZE (10); got 20'],
  ];
  for (const [env, message] of bad) {
    it(`refuses ${JSON.stringify(env)} naming the variable`, function () {
      expect(errorOf(env).message).to.satisfy((m: string) => m.startsWith(message));
    });
  }

  it('turns traces on with OTEL_TRACES_EXPORTER=otlp alone, and off again with OTEL_SDK_DISABLED=true', function () {
    expect(readConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).tracing).to.deep.equal({
      protocol: 'http/protobuf', endpoint: null, tracesEndpoint: null, sampler: 'always_on', ratio: 1, maxQueueSize: 2_048, maxExportBatchSize: 512, scheduleDelayMs: 5_000, exportTimeoutMs: 30_000,
    });
    expect(readConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' }).tracing).to.include({ sampler: 'parentbased_traceidratio', ratio: 0.01 });
    expect(readConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }).tracing).to.equal(null);
  });

  it('bounds the response cache by CACHE_MAX_BYTES, from 1 MiB to 4 GiB', function () {
    expect(readConfig({ CACHE_MAX_BYTES: '1048576' }).cache.maxBytes).to.equal(1_048_576);
    expect(readConfig({ CACHE_MAX_BYTES: '4294967296' }).cache.maxBytes).to.equal(4_294_967_296);
    expect(readConfig({ CACHE_MAX_BYTES: '268435456', CACHE_MAX_ENTRIES: '50000' }).cache).to.include({ maxBytes: 268_435_456, maxEntries: 50_000 });
  });

  it('names whom partners contact, and where the partner agreement is, from OPENAPI_CONTACT_* and OPENAPI_TERMS_URL', function () {
    expect(readConfig({
      OPENAPI_CONTACT_NAME: 'Acme Catalog Team', OPENAPI_CONTACT_EMAIL: 'api-support@acme.example', OPENAPI_CONTACT_URL: 'https://acme.example/support/',
      OPENAPI_TERMS_URL: 'https://acme.example/partner-terms',
    }).openapi).to.deep.equal({
      contact: { name: 'Acme Catalog Team', email: 'api-support@acme.example', url: 'https://acme.example/support' },
      termsUrl: 'https://acme.example/partner-terms',
    });
  });

  it('serves metrics where METRICS_PORT and METRICS_HOST say, and not at all on port 0', function () {
    expect(readConfig({ METRICS_PORT: '9100', METRICS_HOST: '0.0.0.0' }).listeners.metrics).to.deep.equal({ port: 9100, host: '0.0.0.0' });
    expect(readConfig({ METRICS_PORT: '0' }).listeners.metrics.port).to.equal(0);
  });

  it('signs cursors with CURSOR_SECRET when set, and refuses one shorter than 32 characters without echoing it', function () {
    const secret = 'q7Vd2mXk9LpR4tWz8bNc3HsJ6fGy1AeU';
    expect(readConfig({ CURSOR_SECRET: secret }).storage.cursorSecret).to.equal(secret);
    const message = errorOf({ CURSOR_SECRET: secret.slice(1) }).message;
    expect(message).to.satisfy((m: string) => m.startsWith('CURSOR_SECRET: must be at least 32 characters'));
    expect(message).to.not.include(secret.slice(1, 12));
    expect(message.split('\n')).to.have.length(1);
  });

  it('lets webhook endpoints name http and non-public addresses only with WEBHOOK_ALLOW_PRIVATE_TARGETS=true', function () {
    expect(readConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }).webhooks.allowPrivateTargets).to.equal(true);
    expect(readConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }).webhooks.allowPrivateTargets).to.equal(false);
    expect(errorOf({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' }).message).to.equal('WEBHOOK_ALLOW_PRIVATE_TARGETS: must be one of true, false; got "yes"');
  });

  it('never echoes a connection URL, which may hold a password', function () {
    expect(errorOf({ STORAGE: 'mysql', DATABASE_URL: 'http://user:s3cret@db' }).message).to.not.include('s3cret');
  });

  describe('a connection URL whose %-escapes do not decode (the drivers decode them later, naming no setting)', function () {
    const lone = 'holds a % not followed by two hexadecimal digits: write a literal % as %25';
    const cases: readonly (readonly [string, Record<string, string>, string])[] = [
      ['%zz in the password', { STORAGE: 'mysql', DATABASE_URL: 'mysql://catalog:s3cret%zz@db:3306/catalog' }, `DATABASE_URL: the password ${lone}`],
      ['a % ending the password', { DATABASE_URL: 'mysql://catalog:s3cret-100%@db:3306/catalog' }, `DATABASE_URL: the password ${lone}`],
      ['%zz in the user name', { DATABASE_URL: 'mysql://cat%zzalog:s3cret@db:3306/catalog' }, `DATABASE_URL: the user name ${lone}`],
      ['%zz in the database', { DATABASE_URL: 'mysql://catalog:s3cret@db:3306/cata%zzlog' }, `DATABASE_URL: the path ${lone}`],
      ['%zz in the host', { DATABASE_URL: 'mysql://catalog:s3cret@d%zzb:3306/catalog' }, `DATABASE_URL: the host ${lone}`],
      ['%ff alone (no UTF-8 text) in the password', { DATABASE_URL: 'mysql://catalog:s3cret%ff@db:3306/catalog' },
        'DATABASE_URL: the password holds percent-escapes that do not decode to UTF-8 text (such as %ff alone): encode it as encodeURIComponent does, a literal % as %25'],
      ['%zz in the password', { RATE_LIMIT_STORE: 'redis', REDIS_URL: 'redis://:s3cret%zz@cache:6379' }, `REDIS_URL: the password ${lone}`],
      ['a % ending the user name', { REDIS_URL: 'redis://limiter%:s3cret@cache:6379' }, `REDIS_URL: the user name ${lone}`],
      ['%zz in the path', { REDIS_URL: 'redis://:s3cret@cache:6379/%zz' }, `REDIS_URL: the path ${lone}`],
    ];
    for (const [what, env, message] of cases) {
      const variable = message.split(':')[0]!;
      it(`refuses ${variable} with ${what}, naming the setting, the part and the fix, never the value`, function () {
        const error = errorOf(env);
        expect([error.variable, error.message]).to.deep.equal([variable, message]);
        expect(error.message).to.not.include('s3cret');
      });
    }

    it('takes escapes that decode, as the drivers read them', function () {
      expect(readConfig({ STORAGE: 'mysql', DATABASE_URL: 'mysql://us%C3%A9r:100%25%40s3cret@db:3306/cat%2Dlog' }).storage.databaseUrl)
        .to.equal('mysql://us%C3%A9r:100%25%40s3cret@db:3306/cat%2Dlog');
      expect(readConfig({ RATE_LIMIT_STORE: 'redis', REDIS_URL: 'redis://:100%25@cache:6379/0' }).redis).to.deep.equal({ kind: 'single', url: 'redis://:100%25@cache:6379/0', tlsCaFile: null });
      // The query string is decoded leniently by both drivers: a lone % there stops nothing.
      expect(readConfig({ DATABASE_URL: 'mysql://catalog@db/catalog?charset=100%' }).storage.databaseUrl).to.equal('mysql://catalog@db/catalog?charset=100%');
    });
  });

  describe('Read replicas', function () {
    const served = { STORAGE: 'mysql', DATABASE_URL: 'mysql://u:pw@primary/c', RATE_LIMIT_STORE: 'redis', REDIS_URL: 'redis://cache:6379' };

    it('reads DATABASE_REPLICA_URLS, trimmed, in order, and DATABASE_REPLICA_WAIT_MS (1000 unless set)', function () {
      expect(readConfig({ ...served, DATABASE_REPLICA_URLS: ' mysql://u:pw@replica-1/c , mysql://u:pw@replica-2:3307/c' }).storage.replicas)
        .to.deep.equal({ urls: ['mysql://u:pw@replica-1/c', 'mysql://u:pw@replica-2:3307/c'], waitMs: 1_000 });
      expect(readConfig({ ...served, DATABASE_REPLICA_URLS: 'mysql://u@r/c', DATABASE_REPLICA_WAIT_MS: '250' }).storage.replicas).to.deep.equal({ urls: ['mysql://u@r/c'], waitMs: 250 });
      expect(readConfig(served).storage.replicas).to.deep.equal({ urls: [], waitMs: 1_000 });
    });

    const refusals: [string, Record<string, string>, string][] = [
      ['replicas with memory storage', { DATABASE_REPLICA_URLS: 'mysql://u@r/c' }, 'DATABASE_REPLICA_URLS: replicas are read with STORAGE=mysql only: set STORAGE=mysql, or remove DATABASE_REPLICA_URLS'],
      ['replicas without Redis', { ...served, RATE_LIMIT_STORE: 'memory', REDIS_URL: '', DATABASE_REPLICA_URLS: 'mysql://u@r/c' },
        'DATABASE_REPLICA_URLS: an instance learns what a replica must have applied from the changes announced through Redis: set RATE_LIMIT_STORE=redis with Redis settings and a CACHE_TTL_MS above 0, or remove DATABASE_REPLICA_URLS'],
      ['replicas with the cache off', { ...served, CACHE_TTL_MS: '0', DATABASE_REPLICA_URLS: 'mysql://u@r/c' },
        'DATABASE_REPLICA_URLS: an instance learns what a replica must have applied from the changes announced through Redis: set RATE_LIMIT_STORE=redis with Redis settings and a CACHE_TTL_MS above 0, or remove DATABASE_REPLICA_URLS'],
      ['replicas with the cache off, written 00', { ...served, CACHE_TTL_MS: '00', DATABASE_REPLICA_URLS: 'mysql://u@r/c' },
        'DATABASE_REPLICA_URLS: an instance learns what a replica must have applied from the changes announced through Redis: set RATE_LIMIT_STORE=redis with Redis settings and a CACHE_TTL_MS above 0, or remove DATABASE_REPLICA_URLS'],
      ['an empty entry', { ...served, DATABASE_REPLICA_URLS: 'mysql://u@r/c,,mysql://u@s/c' }, 'DATABASE_REPLICA_URLS: replica 2 of 3 is empty: separate the URLs with single commas'],
      ['an entry that is not a mysql URL, without echoing it', { ...served, DATABASE_REPLICA_URLS: 'mysql://u@r/c,postgres://u:secret@s/c' },
        'DATABASE_REPLICA_URLS: replica 2 of 2: must be a mysql:// URL, as mysql://user:password@host:3306/database'],
      ['a password that does not decode', { ...served, DATABASE_REPLICA_URLS: 'mysql://u:50%off@r/c' },
        'DATABASE_REPLICA_URLS: replica 1 of 1: the password holds a % not followed by two hexadecimal digits: write a literal % as %25'],
      ['a replica named twice', { ...served, DATABASE_REPLICA_URLS: 'mysql://u@r/c,mysql://u@s/c,mysql://u@r/c' }, 'DATABASE_REPLICA_URLS: replica 3 of 3 repeats replica 1: name each replica once'],
      ['the primary named as a replica', { ...served, DATABASE_REPLICA_URLS: 'mysql://u:pw@primary/c' }, 'DATABASE_REPLICA_URLS: replica 1 of 1 is DATABASE_URL, the primary: name only replicas here'],
      ['a wait past a minute', { ...served, DATABASE_REPLICA_WAIT_MS: '60001' }, 'DATABASE_REPLICA_WAIT_MS: must be a whole number from 0 to 60000; got "60001"'],
    ];
    for (const [what, env, message] of refusals) {
      it(`refuses ${what}, naming the setting`, function () {
        expect(errorOf(env).message).to.equal(message);
      });
    }
  });

  describe('TLS to the database', function () {
    it('reads DATABASE_TLS and DATABASE_TLS_CA_FILE, with MySQL storage and without (the CLI reads them too)', function () {
      expect(readConfig({ STORAGE: 'mysql', DATABASE_URL: 'mysql://u@db/c', DATABASE_TLS: 'true', DATABASE_TLS_CA_FILE: ' /etc/db-ca.pem ' }).storage.tls)
        .to.deep.equal({ enabled: true, caFile: '/etc/db-ca.pem' });
      expect(readConfig({ DATABASE_TLS: 'true' }).storage.tls).to.deep.equal({ enabled: true, caFile: null });
      expect(readConfig({ DATABASE_TLS: 'false' }).storage.tls).to.deep.equal({ enabled: false, caFile: null });
    });

    const refusals: [string, Record<string, string>, string][] = [
      ['a CA file with TLS off', { DATABASE_TLS_CA_FILE: '/ca.pem' }, 'DATABASE_TLS_CA_FILE: names the authorities TLS trusts, and TLS is off: set DATABASE_TLS=true, or remove DATABASE_TLS_CA_FILE'],
      ['a CA file with TLS set false', { DATABASE_TLS: 'false', DATABASE_TLS_CA_FILE: '/ca.pem' }, 'DATABASE_TLS_CA_FILE: names the authorities TLS trusts, and TLS is off: set DATABASE_TLS=true, or remove DATABASE_TLS_CA_FILE'],
      ['DATABASE_TLS neither true nor false', { DATABASE_TLS: 'required' }, 'DATABASE_TLS: must be one of true, false; got "required"'],
    ];
    for (const [what, env, message] of refusals) {
      it(`refuses ${what}, naming the setting`, function () {
        expect(errorOf(env).message).to.equal(message);
      });
    }
  });

  describe('where Redis is: one server, a Sentinel primary or a Cluster', function () {
    it('reads sentinels with their login, TLS and the primary\'s name, default ports where none is given', function () {
      expect(readConfig({
        RATE_LIMIT_STORE: 'redis', REDIS_SENTINELS: '10.0.0.1:26380, sentinel-b ,[::1]:26381', REDIS_SENTINEL_NAME: 'catalog',
        REDIS_USERNAME: 'pcat', REDIS_PASSWORD: ' s3cret ', REDIS_SENTINEL_PASSWORD: 'watchword', REDIS_TLS: 'true', REDIS_TLS_CA_FILE: '/etc/ca.pem',
      }).redis).to.deep.equal({
        kind: 'sentinel', sentinels: [{ host: '10.0.0.1', port: 26_380 }, { host: 'sentinel-b', port: 26_379 }, { host: '::1', port: 26_381 }],
        name: 'catalog', username: 'pcat', password: ' s3cret ', sentinelPassword: 'watchword', tls: true, tlsCaFile: '/etc/ca.pem',
      });
      expect(readConfig({ REDIS_SENTINELS: 'a:1' }).redis).to.include({ kind: 'sentinel', name: 'mymaster', password: null, tls: false });
    });

    it('reads Cluster nodes, and needs none of the others with memory counting (the CLI announces through them)', function () {
      expect(readConfig({ REDIS_CLUSTER_NODES: 'node-a:7000,node-b', REDIS_PASSWORD: 'pw' }).redis).to.deep.equal({
        kind: 'cluster', nodes: [{ host: 'node-a', port: 7000 }, { host: 'node-b', port: 6379 }], username: null, password: 'pw', tls: false, tlsCaFile: null,
      });
      expect(readConfig({}).redis).to.equal(null);
    });

    const refusals: [string, Record<string, string>, string][] = [
      ['two places', { REDIS_URL: 'redis://a:6379', REDIS_CLUSTER_NODES: 'b:7000' }, 'REDIS_CLUSTER_NODES: cannot be set with REDIS_URL: set exactly one of REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES'],
      ['none, counting in Redis', { RATE_LIMIT_STORE: 'redis' }, 'REDIS_URL: is required with RATE_LIMIT_STORE=redis (or, for Sentinel or Cluster, REDIS_SENTINELS or REDIS_CLUSTER_NODES)'],
      ['a password beside REDIS_URL', { REDIS_URL: 'redis://a:6379', REDIS_PASSWORD: 's3cret' }, 'REDIS_PASSWORD: is not read with REDIS_URL: write the password in the URL, as redis://:password@host:6379'],
      ['REDIS_TLS beside REDIS_URL', { REDIS_URL: 'redis://a:6379', REDIS_TLS: 'true' }, 'REDIS_TLS: is not read with REDIS_URL: TLS to one Redis is the rediss:// scheme of REDIS_URL'],
      ['a CA file without TLS', { REDIS_URL: 'redis://a:6379', REDIS_TLS_CA_FILE: '/ca.pem' }, 'REDIS_TLS_CA_FILE: names the authorities TLS trusts, and REDIS_URL does not use TLS: write it as rediss://, or remove REDIS_TLS_CA_FILE'],
      ['a CA file with TLS off', { REDIS_SENTINELS: 'a:1', REDIS_TLS_CA_FILE: '/ca.pem' }, 'REDIS_TLS_CA_FILE: names the authorities TLS trusts, and TLS is off: set REDIS_TLS=true, or remove REDIS_TLS_CA_FILE'],
      ['a sentinel setting on a Cluster', { REDIS_CLUSTER_NODES: 'a:1', REDIS_SENTINEL_NAME: 'x' }, 'REDIS_SENTINEL_NAME: is not read with REDIS_CLUSTER_NODES: a Cluster has no sentinels'],
      ['a user without a password', { REDIS_SENTINELS: 'a:1', REDIS_USERNAME: 'pcat' }, 'REDIS_USERNAME: needs REDIS_PASSWORD: Redis logs a user in with both'],
      ['a setting without any Redis', { REDIS_PASSWORD: 's3cret' }, 'REDIS_PASSWORD: is set, but no Redis is: set one of REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES, or remove it'],
      ['a bad server', { REDIS_CLUSTER_NODES: 'a:7000,,b' }, 'REDIS_CLUSTER_NODES: must be servers as host:port separated by commas (IPv6 in brackets, as [::1]:6379); got ""'],
      ['a port out of range', { REDIS_SENTINELS: 'a:70000' }, 'REDIS_SENTINELS: must be servers as host:port separated by commas (IPv6 in brackets, as [::1]:26379); got "a:70000"'],
      ['a server twice', { REDIS_CLUSTER_NODES: 'a:7000,a:7000' }, 'REDIS_CLUSTER_NODES: names a:7000 twice'],
      ['REDIS_TLS neither true nor false', { REDIS_CLUSTER_NODES: 'a:7000', REDIS_TLS: 'yes' }, 'REDIS_TLS: must be one of true, false; got "yes"'],
    ];
    for (const [what, env, message] of refusals) {
      it(`refuses ${what}, naming the setting; never a password`, function () {
        const error = errorOf(env);
        expect(error.message).to.equal(message);
        expect(error.message).to.not.include('s3cret');
      });
    }
  });
});
