import { expect } from 'chai';
import { isPosition, mergePositions, waitForPosition } from '../../src/adapters/mysql/gtid-position.js';
import { ReadPositions } from '../../src/adapters/mysql/replica-reads.js';
import { positionIn, tokenAt } from '../../src/application/instances/change-versions.js';
import { ChangesElsewhere } from '../../src/application/instances/changes-elsewhere.js';

const SOURCE_A = '3e11fa47-71ca-11e1-9e33-c80aa9429562';
const SOURCE_B = '4f22ab58-82db-22f2-af44-d91bb0530673';

describe('Replication positions (gtid-position.ts)', function () {
  it('merges MariaDB positions by domain, keeping each domain\'s later sequence number and the server that wrote it', function () {
    expect(mergePositions('0-1-42', '0-1-40')).to.equal('0-1-42');
    expect(mergePositions('0-1-40', '0-2-42')).to.equal('0-2-42');
    expect(mergePositions('0-1-42,1-1-7', '1-3-9,2-1-1')).to.equal('0-1-42,1-3-9,2-1-1');
    // Sequence numbers compare as numbers, not as text, and past 2^53.
    expect(mergePositions('0-1-9', '0-1-10')).to.equal('0-1-10');
    expect(mergePositions('0-1-9007199254740993', '0-1-9007199254740992')).to.equal('0-1-9007199254740993');
  });

  it('merges MySQL GTID sets by source, joining ranges that overlap or touch', function () {
    expect(mergePositions(`${SOURCE_A}:1-5`, `${SOURCE_A}:6-9`)).to.equal(`${SOURCE_A}:1-9`);
    expect(mergePositions(`${SOURCE_A}:1-5:8`, `${SOURCE_A}:3-4,${SOURCE_B}:1-2`)).to.equal(`${SOURCE_A}:1-5:8,${SOURCE_B}:1-2`);
    expect(mergePositions(`${SOURCE_A.toUpperCase()}:1-3`, `${SOURCE_A}:2-7`)).to.equal(`${SOURCE_A}:1-7`);
  });

  it('takes an empty position as covering nothing', function () {
    expect(mergePositions('', '0-1-4')).to.equal('0-1-4');
    expect(mergePositions('0-1-4', '')).to.equal('0-1-4');
    expect(mergePositions('', '')).to.equal('');
  });

  it('tells a position either server could have written from anything else', function () {
    for (const position of ['', '0-1-42', '0-1-42,1-2-3', `${SOURCE_A}:1-5`, `${SOURCE_A}:1-5:7,${SOURCE_B}:3`]) expect(isPosition(position), position).to.equal(true);
    for (const text of ['0-1', 'x-1-2', '0-1-2,', SOURCE_A, `${SOURCE_A}:`, '0-1-2;drop table products', ' 0-1-2']) expect(isPosition(text), text).to.equal(false);
  });

  it('waits with each server\'s own function, the position a bound value', function () {
    expect(waitForPosition('0-1-42', 1.5)).to.deep.equal({ sql: 'select master_gtid_wait(?, ?) = 0 as reached', parameters: ['0-1-42', 1.5] });
    expect(waitForPosition(`${SOURCE_A}:1-5`, 1)).to.deep.equal({ sql: 'select wait_for_executed_gtid_set(?, ?) = 0 as reached', parameters: [`${SOURCE_A}:1-5`, 1] });
  });
});

describe('Tokens that carry a position, and the position replica reads must reach', function () {
  it('carries a position in a token, and none where none was given', function () {
    expect(positionIn(tokenAt('c0ffee', '0-1-42,1-1-3'))).to.equal('0-1-42,1-1-3');
    expect(positionIn(tokenAt('c0ffee', null))).to.equal(null);
    expect(positionIn(tokenAt('c0ffee', ''))).to.equal('');
  });

  it('moves on for every new token\'s position, once, and not for a token seen again or an older position', function () {
    const positions = new ReadPositions();
    const watch = new ChangesElsewhere(positions);
    watch.keysSeen(tokenAt('k1', '0-1-10'));
    watch.catalogSeen('acme', tokenAt('c1', '0-1-12'));
    expect([positions.current, positions.version]).to.deep.equal(['0-1-12', 2]);
    watch.catalogSeen('acme', tokenAt('c1', '0-1-12'));
    watch.catalogSeen('globex', tokenAt('g1', '0-1-11'));
    expect([positions.current, positions.version]).to.deep.equal(['0-1-12', 2]);
  });

  it('asks for the primary\'s own position before the first read, and again after any change may have gone unseen', async function () {
    const positions = new ReadPositions();
    const watch = new ChangesElsewhere(positions);
    expect(positions.known).to.equal(false);
    expect(await positions.settle(() => Promise.resolve('0-1-50'))).to.equal(true);
    expect([positions.current, positions.known]).to.deep.equal(['0-1-50', true]);
    for (const missed of [
      () => watch.versionsMissed('acme'),
      () => watch.catalogSeen('acme', 'a-token-with-no-position'),
      () => watch.keysSeen(tokenAt('k2', 'not a position')),
      () => { watch.sharingLost(); watch.sharingRegained(); },
    ]) {
      missed();
      expect(positions.known, missed.toString()).to.equal(false);
      expect(await positions.settle(() => Promise.resolve('0-1-50'))).to.equal(true);
    }
  });

  it('reads the primary\'s position anew for a read waiting after a change may have gone unseen, not the one already under way', async function () {
    const positions = new ReadPositions();
    let answer: ((position: string) => void) | undefined;
    const first = positions.settle(() => new Promise<string>((resolve) => { answer = resolve; }));
    expect(positions.settle(() => Promise.reject(new Error('shared, not read again')))).to.equal(first);
    positions.unknown();
    const second = positions.settle(() => Promise.resolve('0-1-9'));
    expect(second).to.not.equal(first);
    answer!('0-1-8');
    expect([await first, await second, positions.current, positions.known]).to.deep.equal([true, true, '0-1-9', true]);
  });

  it('reads the primary\'s position again on the next read when it could not be read', async function () {
    const positions = new ReadPositions();
    expect(await positions.settle(() => Promise.reject(new Error('primary away')))).to.equal(false);
    expect(positions.known).to.equal(false);
    expect(await positions.settle(() => Promise.resolve('0-1-7'))).to.equal(true);
    expect(positions.current).to.equal('0-1-7');
  });
});
