/**
 * `npm run bench:scale`: the service at the size of a real partner network (docs/performance.md,
 * at scale). Options: --keys <n,...> (default 10000,100000,1000000): the key rows, two instances
 * on MySQL + Redis (scale-keys.ts); --only keys,last-used,partners (default all): which rows run;
 * the "last used" rows (last-used.ts) write a minute of key uses, up to 100,000 keys among
 * 1,000,000; the partner rows (scale-partners.ts) re-import a file of 10,000 partners with one
 * product changed against a one-partner import, and count the tokens it replaced and an unchanged
 * partner's cache hits after it.
 */
import { parseArgs } from 'node:util';
import { runLastUsedRows } from './last-used.js';
import { runScaleKeyRows } from './scale-keys.js';
import { runScalePartnerRows } from './scale-partners.js';

const ROWS = ['keys', 'last-used', 'partners'] as const;

const { values } = parseArgs({ options: { keys: { type: 'string', default: '10000,100000,1000000' }, only: { type: 'string', default: ROWS.join(',') } } });
const sizes = values.keys.split(',').filter((size) => size !== '').map(Number);
if (sizes.some((size) => !Number.isInteger(size) || size < 1)) throw new Error(`--keys: whole numbers of keys, comma-separated, not ${values.keys}`);
const only = values.only.split(',');
const unknown = only.filter((row) => !(ROWS as readonly string[]).includes(row));
if (unknown.length > 0) throw new Error(`--only: ${ROWS.join(', ')}, not ${unknown.join(', ')}`);
if (only.includes('keys')) await runScaleKeyRows(sizes);
if (only.includes('last-used')) await runLastUsedRows();
if (only.includes('partners')) await runScalePartnerRows();
