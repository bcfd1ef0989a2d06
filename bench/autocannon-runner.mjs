// Runs autocannon in its own process (so it can be pinned to a core) and prints its result as JSON.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const options = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const result = await autocannon(options);
process.stdout.write(JSON.stringify(result));
