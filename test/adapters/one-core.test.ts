import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { collectorTakesTheCore, SINGLE_THREADED_GC, warnOfCollectorThreadsOnOneCore } from '../../src/adapters/config/one-core.js';
import { capturedLogger } from '../support/captured-logger.js';
import { ensureBuilt, ROOT } from '../support/script-command.js';

describe('the collector on one core', function () {
  it('is said when the process has one CPU and node was started without --single-threaded-gc, and only then', function () {
    expect(collectorTakesTheCore(1, [])).to.equal(true);
    expect(collectorTakesTheCore(1, ['--import', 'tsx'])).to.equal(true);
    expect(collectorTakesTheCore(1, [SINGLE_THREADED_GC])).to.equal(false);
    expect(collectorTakesTheCore(1, ['--single_threaded_gc'])).to.equal(false);
    expect(collectorTakesTheCore(2, [])).to.equal(false);

    const one = capturedLogger();
    warnOfCollectorThreadsOnOneCore(one.logger, 1, []);
    const two = capturedLogger();
    warnOfCollectorThreadsOnOneCore(two.logger, 2, []);
    expect(two.lines).to.deep.equal([]);
    expect(one.lines).to.have.length(1);
    expect(one.lines[0]).to.include({ level: 40, cores: 1, advice: `start node with ${SINGLE_THREADED_GC} (node ${SINGLE_THREADED_GC} dist/main.js)` });
  });

  describe('the compiled service pinned to one core by taskset', function () {
    this.timeout(30_000);
    before(function () {
      if (spawnSync('taskset', ['-c', '0', 'true']).status !== 0) this.skip();
      ensureBuilt();
    });

    /** The service's log lines up to its "listening" line, started with these node flags on core 0. */
    async function linesAtStart(nodeFlags: string[]): Promise<Record<string, unknown>[]> {
      const child = spawn('taskset', ['-c', '0', process.execPath, ...nodeFlags, join(ROOT, 'dist/main.js')], {
        cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', PORTAL_PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      const lines: Record<string, unknown>[] = [];
      let rest = '';
      const listening = new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          const parts = (rest + chunk.toString('utf8')).split('\n');
          rest = parts.pop() ?? '';
          for (const part of parts) {
            if (!part.startsWith('{')) continue;
            const line = JSON.parse(part) as Record<string, unknown>;
            lines.push(line);
            if (line.msg === 'listening') resolve();
          }
        });
        child.once('exit', (code) => reject(new Error(`the service exited (${code}) before listening`)));
      });
      try {
        await listening;
      } finally {
        child.kill('SIGKILL');
        await once(child, 'close');
      }
      return lines;
    }

    it('warns at start without the flag, and not with it', async function () {
      const without = await linesAtStart([]);
      const warned = without.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('one CPU'));
      expect(warned, 'the warning without the flag').to.have.length(1);
      expect(warned[0]).to.include({ cores: 1 });
      const withFlag = await linesAtStart([SINGLE_THREADED_GC]);
      expect(withFlag.some((line) => line.msg === 'listening')).to.equal(true);
      expect(withFlag.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('one CPU'))).to.deep.equal([]);
    });
  });
});
