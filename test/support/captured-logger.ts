import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/adapters/logging/logger.js';

/** The service's logger at info, its lines landing parsed in an array instead of on stdout. */
export function capturedLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}
