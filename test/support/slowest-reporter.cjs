'use strict';
/*
 * Mocha's spec reporter, then the ten slowest tests and the ten slowest files, so a run says where its
 * time went (`npm test` uses it; it works in parallel mode, where each file's events come back whole),
 * and a closing line of counts in the plain form CI tools read ("N passed, N failed, N skipped").
 * A test over 20 s says why it must be, in a comment beside it.
 */
const Mocha = require('mocha');

const { Spec } = Mocha.reporters;
const { EVENT_TEST_END, EVENT_HOOK_END, EVENT_RUN_END } = Mocha.Runner.constants;
const SHOWN = 10;

function seconds(ms) {
  return `${(ms / 1000).toFixed(1).padStart(6)} s`;
}

function relativeFile(runnable) {
  const file = runnable.file ?? runnable.parent?.file ?? '(unknown file)';
  return file.startsWith(process.cwd()) ? file.slice(process.cwd().length + 1) : file;
}

class SlowestReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    const tests = [];
    const files = new Map();
    const count = (runnable) => {
      const file = relativeFile(runnable);
      files.set(file, (files.get(file) ?? 0) + (runnable.duration ?? 0));
    };
    runner.on(EVENT_TEST_END, (test) => {
      tests.push({ title: test.fullTitle(), file: relativeFile(test), duration: test.duration ?? 0 });
      count(test);
    });
    runner.on(EVENT_HOOK_END, count);
    runner.once(EVENT_RUN_END, () => {
      const out = (line) => process.stdout.write(`${line}\n`);
      out('');
      out(`  The ${SHOWN} slowest tests:`);
      for (const test of [...tests].sort((a, b) => b.duration - a.duration).slice(0, SHOWN)) {
        out(`  ${seconds(test.duration)}  ${test.file}: ${test.title}`);
      }
      out('');
      out(`  The ${SHOWN} slowest files (tests and hooks):`);
      for (const [file, ms] of [...files].sort((a, b) => b[1] - a[1]).slice(0, SHOWN)) out(`  ${seconds(ms)}  ${file}`);
      out('');
      const { passes, failures, pending } = this.stats;
      out(`${passes} passed, ${failures} failed, ${pending} skipped`);
    });
  }
}

module.exports = SlowestReporter;
