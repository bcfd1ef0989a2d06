/** Writes the files derived from the response contract (see generated-files.ts). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedFiles } from './generated-files.js';

for (const { path, source } of await generatedFiles()) {
  const file = fileURLToPath(new URL(`../${path}`, import.meta.url));
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, source);
  process.stdout.write(`wrote ${path}\n`);
}
