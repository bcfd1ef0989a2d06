// Runs autocannon in its own process (so it can be pinned to a core) and prints its result as JSON.
// With `randomSku` ({ path, products, keys }) beside autocannon's options, every request asks for
// `${path}${n}` with n drawn uniformly below `products`, and the keys in turn: what wrk's cold
// scripts ask, for a machine without wrk (a function cannot travel in the JSON file).
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const { randomSku, ...options } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
if (randomSku !== undefined) {
  let sent = 0;
  options.requests = [{
    setupRequest: (request) => {
      sent += 1;
      const path = `${randomSku.path}${Math.floor(Math.random() * randomSku.products)}`;
      return { ...request, path, headers: { ...request.headers, Authorization: `Bearer ${randomSku.keys[sent % randomSku.keys.length]}` } };
    },
  }];
}
const result = await autocannon(options);
process.stdout.write(JSON.stringify(result));
