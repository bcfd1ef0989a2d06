import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { createConnection, type Connection } from 'mysql2/promise';
import { cli } from './support/cli-process.js';
import { migrationProvider } from '../src/adapters/mysql/migrations.js';
import { migrateTo } from './support/legacy-database.js';
import { useTestDatabase } from './support/mariadb.js';
import { freePort, startRedisServer, type RedisServerProcess } from './support/redis.js';
import { startService, type ServiceProcess } from './support/service-process.js';

const SERVER = new URL(process.env.TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306');
const server = `${SERVER.hostname}:${SERVER.port === '' ? '3306' : SERVER.port}`;
/** A URL on the test server, as a given user, for a given database. */
const urlOf = (database: string, user = decodeURIComponent(SERVER.username), password = ''): string =>
  `mysql://${encodeURIComponent(user)}${password === '' ? '' : `:${encodeURIComponent(password)}`}@${server}/${database}`;

/** Every command that opens the database, each as an operator would type it. */
const DATABASE_COMMANDS: readonly (readonly string[])[] = [
  ['migrate'], ['import', 'catalogs/demo-catalog.json', '--quiet'], ['keys', 'issue', '--partner', 'demo'], ['keys', 'list', '--partner', 'demo'],
  ['keys', 'revoke', 'demo-key'], ['admins', 'invite', '--partner', 'demo', '--email', 'a@demo.example'], ['webhooks', 'list', '--partner', 'demo'],
  ['webhooks', 'add', '--partner', 'demo', '--url', 'https://hooks.demo.example/in'], ['webhooks', 'deliveries', 'whep_x'],
];

/** A real listener on a free loopback port, holding it. */
async function occupiedPort(): Promise<{ port: number; listener: Server }> {
  const listener = createServer();
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  return { port: (listener.address() as { port: number }).port, listener };
}

/** `text` as a regular expression that matches it alone. */
const literally = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The log lines a service printed, parsed. */
const logLines = (service: ServiceProcess): { level: number; msg: string; [field: string]: unknown }[] =>
  service.stdout().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: number; msg: string });

describe('what an operator is told when something is wrong: the setting at fault and the fix', function () {
  this.timeout(90_000);

  describe('the CLI against the database DATABASE_URL names', function () {
    const suffix = randomBytes(4).toString('hex');
    const missing = `pcat_missing_${suffix}`;
    const user = `pcat_op_${suffix}`;
    const password = `Pw-${randomBytes(8).toString('hex')}`;
    let admin: Connection;

    before(async function () {
      admin = await createConnection({ uri: SERVER.href, connectTimeout: 15_000 });
      // A user with every privilege on a database that does not exist, and none elsewhere.
      await admin.query(`create user '${user}'@'%' identified by '${password}'`);
      await admin.query(`grant all privileges on \`${missing}\`.* to '${user}'@'%'`);
    });
    after(async function () {
      await admin.query(`drop user if exists '${user}'@'%'`);
      await admin.end();
    });

    it('every database command, on a database that does not exist, names it and gives the statement that creates it; never the password', async function () {
      const expected = `error: DATABASE_URL names database \`${missing}\` on ${server}, which does not exist (ER_BAD_DB_ERROR). Create it, then create its tables:\n` +
        `  CREATE DATABASE \`${missing}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;\n  npm run cli -- migrate\n`;
      for (const args of DATABASE_COMMANDS) {
        const run = await cli(args, { DATABASE_URL: urlOf(missing, user, password) });
        expect([run.code, run.stdout, run.stderr], args.join(' ')).to.deep.equal([1, '', expected]);
      }
    });

    it('a user the server refuses: names the user and the server, never the password tried', async function () {
      const wrong = `Wrong-${randomBytes(6).toString('hex')}`;
      const run = await cli(['migrate'], { DATABASE_URL: urlOf(missing, user, wrong) });
      expect([run.code, run.stderr]).to.deep.equal([1, `error: DATABASE_URL: the server at ${server} refused user "${user}" (ER_ACCESS_DENIED_ERROR): ` +
        'the user or the password in DATABASE_URL is wrong, or the user may not connect from this machine, or the server takes TLS connections only: set DATABASE_TLS=true\n']);
      expect(run.stderr).to.not.include(wrong);
    });

    it('a database the user may not use: names both, and the grant that lets it', async function () {
      const run = await cli(['keys', 'list', '--partner', 'demo'], { DATABASE_URL: urlOf('mysql', user, password) });
      expect([run.code, run.stderr]).to.deep.equal([1, `error: DATABASE_URL: user "${user}" may not use database \`mysql\` on ${server} (ER_DBACCESS_DENIED_ERROR). ` +
        `Grant it, or name a database the user may use:\n  GRANT ALL PRIVILEGES ON \`mysql\`.* TO '${user}'@'<the host it connects from>';\n`]);
      expect(run.stderr).to.not.include(password);
    });

    it('a port where no database listens: names the address and DATABASE_URL', async function () {
      const port = await freePort();
      const run = await cli(['migrate'], { DATABASE_URL: `mysql://root@127.0.0.1:${port}/catalog` });
      expect([run.code, run.stderr]).to.deep.equal([1, `error: DATABASE_URL: nothing accepts connections at 127.0.0.1:${port} (ECONNREFUSED): ` +
        'start MariaDB or MySQL there, or correct the host and port in DATABASE_URL\n']);
    });

    it('a URL of the wrong kind: says what one looks like', async function () {
      const run = await cli(['migrate'], { DATABASE_URL: 'postgres://db/catalog' });
      expect([run.code, run.stderr]).to.deep.equal([1, 'error: DATABASE_URL: must be a mysql:// URL, as mysql://user:password@host:3306/database\n']);
    });

    it('a URL with a % that starts no escape: names the setting and the part, and how to write a %; never the value', async function () {
      // Before, "URI malformed" from the driver's decode, or a stack trace from the advice on it.
      const urls: readonly (readonly [string, string])[] = [
        [`mysql://${user}:${password}%zz@${server}/${missing}`, 'password'], [`mysql://${user}%zz:${password}@${server}/${missing}`, 'user name'],
        [`mysql://${user}:${password}@${server}/${missing}%zz`, 'path'],
      ];
      for (const [url, part] of urls) {
        const run = await cli(['keys', 'list', '--partner', 'demo'], { DATABASE_URL: url });
        expect([run.code, run.stdout, run.stderr], part).to.deep.equal([1, '', `error: DATABASE_URL: the ${part} holds a % not followed by two hexadecimal digits: write a literal % as %25\n`]);
      }
      const redis = await cli(['keys', 'revoke', 'demo-key'], { DATABASE_URL: urlOf(missing, user, password), REDIS_URL: `redis://:${password}%zz@127.0.0.1:6379` });
      expect([redis.code, redis.stdout, redis.stderr]).to.deep.equal([1, '', 'error: REDIS_URL: the password holds a % not followed by two hexadecimal digits: write a literal % as %25\n']);
    });

    describe('on a database with no schema', function () {
      const empty = useTestDatabase({ migrated: false });

      it('each command but migrate says to run migrate', async function () {
        for (const args of DATABASE_COMMANDS.filter(([name]) => name !== 'migrate')) {
          const run = await cli(args, { DATABASE_URL: empty.url });
          const database = new URL(empty.url).pathname.slice(1);
          expect([run.code, run.stderr], args.join(' ')).to.deep.equal([1, `error: database \`${database}\` on ${server} has no schema yet, or an older one than this version needs ` +
            '(ER_NO_SUCH_TABLE). Bring it up to date with the same DATABASE_URL:\n  npm run cli -- migrate\n']);
        }
      });
    });

    it('a catalog file that cannot be read: names it and why', async function () {
      const missingFile = '/nonexistent/catalog.json';
      const check = await cli(['check', missingFile, '--quiet']);
      expect([check.code, check.stderr]).to.deep.equal([1, `error: cannot read catalog file ${missingFile}: no such file (ENOENT)\n`]);
      const directory = await cli(['check', 'catalogs', '--quiet']);
      expect([directory.code, directory.stderr]).to.deep.equal([1, 'error: cannot read catalog file catalogs: it is a directory, not a file (EISDIR)\n']);
    });
  });

  describe('a Redis that refuses the user REDIS_URL names', function () {
    const password = `Pw-${randomBytes(8).toString('hex')}`;
    const wrong = `Wrong-${randomBytes(6).toString('hex')}`;
    /** One Redis that asks for `password`, one that asks for none. */
    let guarded: RedisServerProcess | undefined;
    let open: RedisServerProcess | undefined;
    const running: ServiceProcess[] = [];
    /** The server's URL with a login in it, as an operator would write it: `login` is `user:password@`. */
    const withLogin = (redis: RedisServerProcess | undefined, login: string): string => redis!.url.replace('redis://', `redis://${login}`);
    /**
     * What a refused login reads: the setting, the server, the refusal, Redis's reply (its code, then
     * words that vary with Redis's version) and the fix.
     */
    const refusedLogin = (redis: RedisServerProcess | undefined, code: string, fix: string): string =>
      `REDIS_URL: Redis at ${literally(redis!.url.replace('redis://', ''))} refused the login \\(${literally(code)}[^)]*\\): ${literally(fix)}`;
    const wrongLogin = (redis: RedisServerProcess | undefined): string => refusedLogin(redis, 'WRONGPASS ', 'the user name or password in REDIS_URL is wrong');

    before(async function () {
      guarded = await startRedisServer(undefined, ['--requirepass', password]);
      open = await startRedisServer();
    });
    afterEach(function () {
      for (const service of running.splice(0)) service.kill();
    });
    after(async function () {
      await guarded?.kill();
      await open?.kill();
    });

    /** A start with Redis counting: its exit code and what it printed on stderr. */
    async function started(redisUrl: string): Promise<{ code: number | null; stderr: string }> {
      const service = startService({ RATE_LIMIT_STORE: 'redis', REDIS_URL: redisUrl });
      running.push(service);
      return { code: await service.exited(), stderr: service.stderr() };
    }

    it('stops the start on a wrong password or user, naming REDIS_URL, the server and its reply; never the password tried', async function () {
      for (const login of [`:${wrong}@`, `default:${wrong}@`, `nobody:${password}@`]) {
        const start = await started(withLogin(guarded, login));
        expect(start.code, login).to.equal(1);
        expect(start.stderr, login).to.match(new RegExp(`^partner-catalog-api: failed to start: ${wrongLogin(guarded)}\n$`));
        expect(start.stderr).to.not.include(wrong).and.not.include(password);
      }
    });

    it('stops the start when Redis asks for a password REDIS_URL does not give, or gives one Redis does not ask for', async function () {
      const none = await started(guarded!.url);
      expect(none.code).to.equal(1);
      expect(none.stderr).to.match(new RegExp(`^partner-catalog-api: failed to start: ${refusedLogin(guarded, 'NOAUTH ',
        'it asks for a password, and REDIS_URL gives none: write it in REDIS_URL, as redis://:password@host:6379')}\n$`));
      // ioredis lets this one pass with a warning of its own; the start logs in once more itself, and stops.
      const needless = await started(withLogin(open, `:${password}@`));
      expect(needless.code).to.equal(1);
      expect(needless.stderr.trimEnd().split('\n').at(-1)).to.match(new RegExp(`^partner-catalog-api: failed to start: ${refusedLogin(open, 'ERR AUTH ',
        'it asks for no password, and REDIS_URL gives one: remove the password from REDIS_URL, or correct its host and port if they name another Redis')}$`));
      expect(needless.stderr).to.not.include(password);
    });

    it('starts as usual with the right password, with no word of Redis', async function () {
      const service = startService({ RATE_LIMIT_STORE: 'redis', REDIS_URL: withLogin(guarded, `:${password}@`) });
      running.push(service);
      await service.waitFor(/"msg":"listening"/);
      expect(logLines(service).filter((line) => line.level >= 40)).to.deep.equal([]);
    });

    describe('an operator command that announces its write', function () {
      const testDb = useTestDatabase();

      it('says the write is committed, and that Redis refused the login, naming REDIS_URL; never the password', async function () {
        const env = { DATABASE_URL: testDb.url };
        const refused = { ...env, REDIS_URL: withLogin(guarded, `:${wrong}@`) };
        const committed = (what: string): RegExp => new RegExp(`^warning: ${literally(what)} is committed to the database, but the running instances could not be told through Redis ` +
          `\\(${wrongLogin(guarded)}\\): instances still connected to Redis may serve what they hold for up to CACHE_TTL_MS; run the command again with Redis reachable to tell them at once\n$`);

        const imported = await cli(['import', 'catalogs/demo-catalog.json', '--quiet'], refused);
        expect(imported.code).to.equal(3);
        expect(imported.stdout).to.match(/^imported catalogs\/demo-catalog.json\n/);
        expect(imported.stderr).to.match(committed('the import'));

        const issued = await cli(['keys', 'issue', '--partner', 'demo', '--json'], env);
        expect(issued.code, issued.stderr).to.equal(0);
        const { id } = issued.json() as { id: string };
        const revoked = await cli(['keys', 'revoke', id], refused);
        expect(revoked.code).to.equal(3);
        expect(revoked.stdout).to.match(new RegExp(`^revoked key ${id} \\(since `));
        expect(revoked.stderr).to.match(committed(`the revocation of key ${id}`));
        for (const run of [imported, revoked]) expect(run.stderr).to.not.include(wrong);
        // The write stands: the key is revoked.
        const listed = (await cli(['keys', 'list', '--partner', 'demo', '--json'], env)).json() as { id: string; revoked_at: string | null }[];
        expect(listed.find((key) => key.id === id)?.revoked_at).to.be.a('string');
      });
    });
  });

  describe('the service at start', function () {
    const running: ServiceProcess[] = [];
    const start = (env: Record<string, string>): ServiceProcess => {
      const service = startService(env);
      running.push(service);
      return service;
    };
    afterEach(function () {
      for (const service of running.splice(0)) service.kill();
    });

    /** A start that fails: its one reason, on stderr. */
    async function refusal(env: Record<string, string>): Promise<string> {
      const service = start(env);
      expect(await service.exited()).to.equal(1);
      return service.stderr();
    }

    describe('on MySQL storage', function () {
      const old = useTestDatabase({ migrated: false });

      it('refuses a database that does not exist, naming it and the statement that creates it', async function () {
        const name = `pcat_missing_${randomBytes(4).toString('hex')}`;
        expect(await refusal({ STORAGE: 'mysql', DATABASE_URL: urlOf(name) })).to.equal(
          `partner-catalog-api: failed to start: DATABASE_URL names database \`${name}\` on ${server}, which does not exist (ER_BAD_DB_ERROR). Create it, then create its tables:\n` +
          `  CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;\n  npm run cli -- migrate\n`);
      });

      it('refuses a database whose schema is behind this version, naming the migrations it lacks', async function () {
        // The schema one migration behind, whichever is the newest.
        const names = Object.keys(await migrationProvider.getMigrations()).sort();
        await migrateTo(old.db, names.at(-2)!);
        const database = new URL(old.url).pathname.slice(1);
        expect(await refusal({ STORAGE: 'mysql', DATABASE_URL: old.url })).to.equal(`partner-catalog-api: failed to start: database \`${database}\` on ${server} ` +
          `lacks 1 migration this version needs (${names.at(-1)!}). Bring it up to date with the same DATABASE_URL before starting:\n  npm run cli -- migrate\n`);
        // Once migrated, the same start serves.
        expect((await cli(['migrate'], { DATABASE_URL: old.url })).code).to.equal(0);
        await start({ STORAGE: 'mysql', DATABASE_URL: old.url }).waitFor(/"msg":"listening"/);
      });

      it('starts with the database out of reach, saying where it looked (it may come back; /readyz tells meanwhile)', async function () {
        const port = await freePort();
        const service = start({ STORAGE: 'mysql', DATABASE_URL: `mysql://root@127.0.0.1:${port}/catalog` });
        await service.waitFor(/"msg":"listening"/);
        expect(logLines(service).find((line) => line.msg.startsWith('database: not reachable at start'))).to.deep.include({
          level: 40, reason: `DATABASE_URL: nothing accepts connections at 127.0.0.1:${port} (ECONNREFUSED): start MariaDB or MySQL there, or correct the host and port in DATABASE_URL`,
        });
      });
    });

    for (const setting of ['PORT', 'PORTAL_PORT', 'METRICS_PORT']) {
      it(`refuses ${setting} on a port another program holds, naming the setting and the fix`, async function () {
        const { port, listener } = await occupiedPort();
        try {
          expect(await refusal({ [setting]: String(port) })).to.equal(`partner-catalog-api: failed to start: ${setting}=${port}: another program already listens on ` +
            `127.0.0.1:${port} (EADDRINUSE), perhaps another instance of this service. Stop it (\`ss -ltnp 'sport = :${port}'\` names it), or set ${setting} to a free port\n`);
        } finally {
          listener.close();
        }
      });
    }

    it('refuses a DATABASE_URL or REDIS_URL with a % that starts no escape, naming the setting and the part, and how to write a %', async function () {
      const secret = `Pw-${randomBytes(8).toString('hex')}`;
      expect(await refusal({ STORAGE: 'mysql', DATABASE_URL: `mysql://catalog:${secret}%zz@127.0.0.1:3306/catalog` })).to.equal(
        'partner-catalog-api: failed to start: DATABASE_URL: the password holds a % not followed by two hexadecimal digits: write a literal % as %25\n');
      expect(await refusal({ RATE_LIMIT_STORE: 'redis', REDIS_URL: `redis://:${secret}%zz@127.0.0.1:6379` })).to.equal(
        'partner-catalog-api: failed to start: REDIS_URL: the password holds a % not followed by two hexadecimal digits: write a literal % as %25\n');
    });

    it('refuses a HOST this machine does not have, naming it and what to set', async function () {
      // A documentation address (TEST-NET-1): no machine has it, and binding to it sends nothing anywhere.
      expect(await refusal({ HOST: '192.0.2.1' })).to.equal('partner-catalog-api: failed to start: HOST=192.0.2.1: this machine has no such address (EADDRNOTAVAIL). ' +
        'Set HOST to one of its addresses: 127.0.0.1 for this machine only, 0.0.0.0 for all of them\n');
      expect(await refusal({ METRICS_HOST: '192.0.2.1', METRICS_PORT: String(await freePort()) })).to.match(/^partner-catalog-api: failed to start: METRICS_HOST=192\.0\.2\.1: /);
    });

    it('refuses a CATALOG_FILE it cannot read, naming the setting and the fix', async function () {
      expect(await refusal({ CATALOG_FILE: '/nonexistent/catalog.json' })).to.equal('partner-catalog-api: failed to start: CATALOG_FILE: cannot read catalog file /nonexistent/catalog.json: ' +
        'no such file (ENOENT); set CATALOG_FILE to a partner-catalog/v1 file this process can read, or unset it to serve the demo catalog\n');
    });

    it('warns that Redis is out of reach, naming REDIS_URL and what the instance does meanwhile', async function () {
      const port = await freePort();
      const service = start({ RATE_LIMIT_STORE: 'redis', REDIS_URL: `redis://127.0.0.1:${port}` });
      await service.waitFor(/"msg":"listening"/);
      const line = logLines(service).find((l) => l.msg.startsWith('rate limiter: Redis not reachable at start'));
      expect(line).to.deep.include({ level: 40, msg: 'rate limiter: Redis not reachable at start; each instance counts on its own share until it is' });
      expect(line!.reason).to.match(new RegExp(`^REDIS_URL: Redis at 127\\.0\\.0\\.1:${port} did not answer \\(within \\d+ ms: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\): start it, or correct REDIS_URL$`));
    });

    it('warns of each setting that weakens the deployment, once, naming it; a default start warns of none', async function () {
      const weakened = start({
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', TRUSTED_PROXIES: '0.0.0.0/0', PORTAL_PORT: String(await freePort()), PORTAL_PUBLIC_URL: 'https://portal.example',
      });
      await weakened.waitFor(/"msg":"listening"/);
      const warnings = logLines(weakened).filter((line) => line.level === 40);
      expect(warnings.map((line) => line.setting)).to.deep.equal(['WEBHOOK_ALLOW_PRIVATE_TARGETS=true', 'TRUSTED_PROXIES=0.0.0.0/0', 'PORTAL_SECURE_COOKIES=false']);
      for (const line of warnings) expect(line.msg).to.match(new RegExp(`^${literally(String(line.setting))} weakens this deployment: `));
      expect(warnings[0]!.msg).to.include('plain http').and.include('development and tests only');

      const plain = start({});
      await plain.waitFor(/"msg":"listening"/);
      expect(logLines(plain).filter((line) => line.level >= 40)).to.deep.equal([]);
    });
  });
});
