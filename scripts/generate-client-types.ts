/** Writes the client package's types from the service's OpenAPI document (see client-types.ts). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { CLIENT_TYPES_FILE, clientTypesSource } from './client-types.js';

mkdirSync(dirname(CLIENT_TYPES_FILE), { recursive: true });
writeFileSync(CLIENT_TYPES_FILE, await clientTypesSource());
process.stdout.write(`wrote ${relative(process.cwd(), CLIENT_TYPES_FILE)}\n`);
