import { expect } from 'chai';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/adapters/mysql/database.js';
import { LAST_USED_KEYS_PER_STATEMENT, MysqlApiKeyAdmin } from '../../src/adapters/mysql/mysql-api-key-admin.js';
import { createMysqlDatabase } from '../../src/adapters/mysql/mysql-database.js';
import { useTestDatabase } from '../support/mariadb.js';
import { statementsRun } from '../support/mysql-statements.js';
import { seededRandom } from '../support/seeded-random.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const PARTNER = 'lu';
/** More than two statements' worth, the size at which the single CASE statement missed the service's 1 s deadline. */
const KEYS = 12_000;
/** api_keys.id is varchar(255). */
const LONGEST_ID = 255;
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0, 123);
const SEED = 7;

const keyId = (n: number): string => `${PARTNER}-${String(n).padStart(6, '0')}`;
/** A key whose id is as long as the column allows: a longer unknown id must not be cut down to it. */
const LONG_ID = `${PARTNER}-`.padEnd(LONGEST_ID, 'x');

type Use = { keyId: string; at: Date };

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('"last used" times written to MySQL', function () {
  const testDb = useTestDatabase();
  let proxy: TcpProxy | undefined;
  let db: Kysely<Database> | undefined;

  const stored = async (): Promise<Map<string, number | null>> => {
    const rows = await testDb.db.selectFrom('api_keys').select(['id', 'last_used_at']).where('partner_id', '=', PARTNER).execute();
    return new Map(rows.map((row) => [row.id, row.last_used_at?.getTime() ?? null]));
  };

  before(async function () {
    await testDb.db.insertInto('partners').values({ id: PARTNER, name: 'Last used' }).execute();
    await sql`insert into api_keys (id, partner_id, sha256, origin, created_at)
      select concat(${PARTNER}, '-', lpad(seq, 6, '0')), ${PARTNER}, sha2(concat('lu-key-', seq), 256), 'cli', ${new Date(T0)}
      from ${sql.raw(`seq_1_to_${KEYS}`)}`.execute(testDb.db);
    await testDb.db.insertInto('api_keys').values({ id: LONG_ID, partner_id: PARTNER, sha256: 'f'.repeat(64), origin: 'cli', created_at: new Date(T0), label: null, revoked_at: null }).execute();
    // Through a proxy of the test's own, whose bytes tell the statements sent.
    const target = new URL(testDb.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) }, { capture: true });
    target.port = String(proxy.port);
    db = createMysqlDatabase(target.toString(), { queryTimeoutMs: 60_000 });
  });
  after(async function () {
    await db?.destroy();
    await proxy?.close();
  });
  beforeEach(async function () {
    await sql`update api_keys set last_used_at = null`.execute(testDb.db);
  });

  /** Writes the uses through the proxied handle and returns the statements it took. */
  const save = async (uses: readonly Use[]): Promise<number> => {
    const before = statementsRun(proxy!);
    await new MysqlApiKeyAdmin(db!).saveLastUsed(uses);
    return statementsRun(proxy!) - before;
  };

  it(`writes ${KEYS.toLocaleString('en-US')} keys, each with its exact millisecond, one statement per ${LAST_USED_KEYS_PER_STATEMENT.toLocaleString('en-US')} keys`, async function () {
    const ids = Array.from({ length: KEYS }, (_, i) => keyId(i + 1));
    // Each key its own millisecond, in no particular order.
    const uses = shuffled(ids.map((id, i) => ({ keyId: id, at: new Date(T0 + 1 + i * 7) })), seededRandom(SEED));
    expect(Math.ceil(KEYS / LAST_USED_KEYS_PER_STATEMENT)).to.be.greaterThan(2);
    expect(await save(uses)).to.equal(Math.ceil(KEYS / LAST_USED_KEYS_PER_STATEMENT));
    const expected = new Map<string, number | null>(ids.map((id, i) => [id, T0 + 1 + i * 7]));
    expected.set(LONG_ID, null);
    expect(await stored()).to.deep.equal(expected);
  });

  it('never replaces a later time by an earlier one, in any statement of the batch, and ignores unknown ids', async function () {
    // Another instance wrote every key at T0 + 10 s.
    const ids = Array.from({ length: KEYS }, (_, i) => keyId(i + 1));
    const theirs = T0 + 10_000;
    await sql`update api_keys set last_used_at = ${new Date(theirs)} where partner_id = ${PARTNER}`.execute(testDb.db);
    // Ours: even keys earlier, odd keys later, spread over every statement; unknown ids among them,
    // one differing only in case, one past the column's length whose first 255 characters are a key's.
    const known = ids.map((id, i) => ({ keyId: id, at: new Date(i % 2 === 0 ? theirs - 1 - i : theirs + 1 + i) }));
    const unknown = [
      { keyId: `${PARTNER}-nope`, at: new Date(theirs + 5) },
      { keyId: keyId(1).toUpperCase(), at: new Date(theirs + 5) },
      { keyId: `${LONG_ID}yyy`, at: new Date(theirs + 5) },
      { keyId: '', at: new Date(theirs + 5) },
    ];
    const uses = shuffled([...known, ...unknown], seededRandom(SEED));
    expect(await save(uses)).to.equal(Math.ceil(uses.length / LAST_USED_KEYS_PER_STATEMENT));
    const expected = new Map<string, number | null>(ids.map((id, i) => [id, i % 2 === 0 ? theirs : theirs + 1 + i]));
    expected.set(LONG_ID, theirs);
    expect(await stored()).to.deep.equal(expected);
    expect(Number((await testDb.db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n)).to.equal(KEYS + 1);
  });

  it('writes a key named twice with the later of its times, and sends nothing for no uses', async function () {
    expect(await save([])).to.equal(0);
    expect(await save([{ keyId: LONG_ID, at: new Date(T0 + 999) }, { keyId: keyId(1), at: new Date(T0 + 5) }, { keyId: LONG_ID, at: new Date(T0 + 998) }])).to.equal(1);
    expect(await save([{ keyId: keyId(2), at: new Date(T0 + 5) }, { keyId: keyId(2), at: new Date(T0 + 6) }])).to.equal(1);
    const times = await stored();
    expect([times.get(LONG_ID), times.get(keyId(1)), times.get(keyId(2))]).to.deep.equal([T0 + 999, T0 + 5, T0 + 6]);
  });
});
