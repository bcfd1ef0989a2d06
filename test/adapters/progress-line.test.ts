import { expect } from 'chai';
import { PROGRESS_POLICY, ProgressLine, progressPolicy, type ProgressOutput } from '../../src/adapters/cli/progress.js';

/** What a stream was sent, as a terminal or as a pipe. */
function output(tty: boolean, columns?: number): ProgressOutput & { text: string } {
  return { text: '', isTTY: tty, ...(columns === undefined ? {} : { columns }), write(text: string) { this.text += text; } };
}

// The policy on a clock the test moves: when a line falls due, at each step of the work (the timer
// that covers a quiet stretch is cleared by the end of each test, before it could fire).
describe('the progress line of import and check', function () {
  let now: number;
  const clock = (): number => now;
  beforeEach(function () {
    now = 0;
  });

  it('in a log: the first line a second after the process started, then one every 4 s, then the last', function () {
    const out = output(false);
    const line = new ProgressLine('import', out, PROGRESS_POLICY, 10_000_000, clock);
    now = 999;
    line.bytesRead(1_000_000);
    expect(out.text).to.equal('');
    now = 1_000;
    line.bytesRead(2_000_000);
    expect(out.text).to.equal('import: 2.0 of 10.0 MB (20%), about 4 s left; 0 products read, 0 written\n');
    for (let i = 0; i < 1_000; i++) line.productRead();
    now = 4_999;
    line.productsWritten(1_000);
    expect(out.text.split('\n')).to.have.length(2);
    now = 5_000;
    line.bytesRead(5_000_000);
    expect(out.text.split('\n')[1]).to.equal('import: 5.0 of 10.0 MB (50%), about 5 s left; 1,000 products read, 1,000 written; 200 products/s');
    line.startStage('finishing');
    now = 9_000;
    line.productsWritten(1_000);
    expect(out.text.split('\n')[2]).to.equal('import: the file is read, finishing (deletions, keys, commit); 1,000 products read, 1,000 written');
    now = 9_500;
    line.finish();
    expect(out.text.split('\n').slice(3)).to.deep.equal(['import: done in 9.5 s: 1,000 products read, 1,000 written, from a file of 10.0 MB', '']);
  });

  it('counts the wait for the program to load: started late, it prints at its first step', function () {
    now = 1_500;
    const out = output(false);
    const line = new ProgressLine('check', out, PROGRESS_POLICY, 1_000_000, clock);
    line.bytesRead(0);
    expect(out.text).to.equal('check: validating: 0.0 of 1.0 MB (0%); 0 products read, 0 valid\n');
    line.finish();
  });

  it('prints nothing for work done before the first line was due, nor when it fails then', function () {
    for (const end of ['finish', 'fail'] as const) {
      const out = output(false);
      const line = new ProgressLine('import', out, PROGRESS_POLICY, 1_000, clock);
      now = 900;
      line.bytesRead(1_000);
      line[end]();
      expect(out.text).to.equal('');
    }
  });

  it('on a terminal: one line redrawn in place, cut to the width, ended by the last', function () {
    const out = output(true, 40);
    const line = new ProgressLine('check', out, PROGRESS_POLICY, 2_000_000, clock);
    now = 250;
    line.bytesRead(1_000_000);
    now = 400;
    line.bytesRead(2_000_000);
    line.startStage('reporting');
    now = 500;
    line.bytesRead(1_000_000);
    now = 600;
    line.fail();
    expect(out.text.split('\r\x1b[K')).to.deep.equal([
      '',
      'check: validating: 1.0 of 2.0 MB (50%)…',
      'check: reporting: 1.0 of 2.0 MB (50%),…',
      'check: stopped after 0.6 s: 0 of 0 products checked\n',
    ]);
  });

  it('check\'s summary: one stage, checking, its products counted as read and valid, then as checked once the file passed', function () {
    const out = output(false);
    const line = new ProgressLine('check', out, PROGRESS_POLICY, 2_000_000, clock);
    line.startStage('checking');
    for (let i = 0; i < 64; i++) {
      line.productRead();
      line.productValid();
    }
    now = 1_000;
    line.bytesRead(1_000_000);
    now = 2_000;
    line.finish();
    expect(out.text).to.equal('check: checking: 1.0 of 2.0 MB (50%), about 1 s left; 64 products read, 64 valid; 64 products/s\n' +
      'check: done in 2.0 s: 64 products checked, from a file of 2.0 MB\n');
  });

  it('a refused file: the line that ends it counts every product read, those with problems too, and says how many were valid', function () {
    // As `check` met a file whose products[1] and products[3] are refused: four read, two valid.
    for (const stage of ['validating', 'checking'] as const) {
      const out = output(false);
      const line = new ProgressLine('check', out, { firstMs: 0, everyMs: 0, redrawMs: 0 }, 9_672, clock);
      if (stage === 'checking') line.startStage('checking');
      for (const valid of [true, false, true, false]) {
        line.productRead();
        if (valid) line.productValid();
      }
      line.bytesRead(9_672);
      now = 100;
      line.fail();
      expect(out.text.split('\n').slice(-2), stage).to.deep.equal([`check: stopped after 0.1 s: 4 products read, 2 valid`, '']);
      now = 0;
    }
  });

  it('on a small file: sizes in KB, or in bytes under a kilobyte, never "0.0 of 0.0 MB"', function () {
    for (const [size, read, first, last] of [
      [9_672, 3_200, 'check: validating: 3.2 of 9.7 KB (33%)', 'from a file of 9.7 KB'],
      [640, 640, 'check: validating: 640 of 640 bytes (100%)', 'from a file of 640 bytes'],
      [0, 0, 'check: validating: 0 of 0 bytes (100%)', 'from a file of 0 bytes'],
    ] as const) {
      now = 0;
      const out = output(false);
      const line = new ProgressLine('check', out, { firstMs: 0, everyMs: 0, redrawMs: 0 }, size, clock);
      line.bytesRead(read);
      now = 100;
      line.finish();
      const [progress, done] = out.text.split('\n');
      expect(progress!.startsWith(first), progress).to.equal(true);
      expect(done!.endsWith(last), done).to.equal(true);
      expect(out.text).to.not.include('0.0 of 0.0');
    }
  });

  it('takes its interval from PROGRESS_INTERVAL_MS, the first line never later than it, and refuses a bad one', function () {
    expect(progressPolicy({})).to.equal(PROGRESS_POLICY);
    expect(progressPolicy({ PROGRESS_INTERVAL_MS: '30000' })).to.deep.equal({ firstMs: 1_000, everyMs: 30_000, redrawMs: 250 });
    expect(progressPolicy({ PROGRESS_INTERVAL_MS: '0' })).to.deep.equal({ firstMs: 0, everyMs: 0, redrawMs: 0 });
    expect(() => progressPolicy({ PROGRESS_INTERVAL_MS: '-1' })).to.throw('PROGRESS_INTERVAL_MS: must be a whole number of milliseconds from 0 to 3600000; got "-1"');
  });
});
