/**
 * `npm run bench:scale`: the service at the size of a real partner network (docs/performance.md,
 * at scale). Options: --keys <n,...> (default 10000,100000,1000000): the key rows (scale-keys.ts).
 */
import { parseArgs } from 'node:util';
import { runScaleKeyRows } from './scale-keys.js';

const { values } = parseArgs({ options: { keys: { type: 'string', default: '10000,100000,1000000' } } });
const sizes = values.keys.split(',').filter((size) => size !== '').map(Number);
if (sizes.some((size) => !Number.isInteger(size) || size < 1)) throw new Error(`--keys: whole numbers of keys, comma-separated, not ${values.keys}`);
await runScaleKeyRows(sizes);
