import { ensureBuilt } from './script-command.js';

/*
 * Mocha's global setup: runs once, in the main process, before any test file, also in parallel mode
 * where files run in workers. The tests start the compiled service and CLI (dist/); building here, when
 * src/ is newer than dist/, means no two workers ever build at once. `npm test` has built already,
 * and this finds nothing to do.
 */
export function mochaGlobalSetup(): void {
  ensureBuilt();
}
