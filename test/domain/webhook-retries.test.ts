import { expect } from 'chai';
import {
  DEFAULT_RETRY_SCHEDULE_SECONDS, MAX_RETRY_AFTER_SECONDS, parseRetrySchedule, retryDelayMs, verdictOf,
} from '../../src/domain/webhook-retries.js';

describe('webhook retries', function () {
  it('delivers on 2xx, takes 410 as the endpoint gone, fails on anything else', function () {
    expect([200, 204, 299].map(verdictOf)).to.deep.equal(['delivered', 'delivered', 'delivered']);
    expect(verdictOf(410)).to.equal('endpoint_gone');
    expect([null, 199, 301, 302, 400, 404, 429, 500, 503].map(verdictOf)).to.deep.equal(Array(9).fill('failed'));
  });

  it('waits each scheduled time give or take 10 %, and gives up after the last', function () {
    const schedule = DEFAULT_RETRY_SCHEDULE_SECONDS;
    expect(schedule).to.deep.equal([5, 300, 1800, 7200, 18000, 36000, 36000]);
    schedule.forEach((seconds, index) => {
      expect(retryDelayMs(schedule, index + 1, null, () => 0)).to.equal(seconds * 900);
      expect(retryDelayMs(schedule, index + 1, null, () => 0.5)).to.equal(seconds * 1000);
      expect(retryDelayMs(schedule, index + 1, null, () => 0.999_999)).to.be.closeTo(seconds * 1100, 100);
    });
    expect(retryDelayMs(schedule, schedule.length + 1, null)).to.equal(null);
    expect(retryDelayMs([], 1, null)).to.equal(null);
  });

  it('spreads retries: a thousand draws cover the whole ±10 % band', function () {
    const delays = Array.from({ length: 1000 }, () => retryDelayMs([300], 1, null)!);
    expect(Math.min(...delays)).to.be.at.least(270_000).and.below(273_000);
    expect(Math.max(...delays)).to.be.at.most(330_000).and.above(327_000);
  });

  it('honours a longer Retry-After, up to a day, and never shortens the schedule for a shorter one', function () {
    expect(retryDelayMs([5], 1, 86_400, () => 0.5)).to.equal(86_400_000);
    expect(retryDelayMs([5], 1, 10 * 86_400, () => 0.5)).to.equal(MAX_RETRY_AFTER_SECONDS * 1000);
    expect(retryDelayMs([300], 1, 1, () => 0.5)).to.equal(300_000);
    // Retry-After does not add an attempt the schedule does not have.
    expect(retryDelayMs([300], 2, 60, () => 0.5)).to.equal(null);
  });

  it('reads WEBHOOK_RETRY_SCHEDULE exactly, naming the wait that is wrong', function () {
    expect(parseRetrySchedule('5,300,1800')).to.deep.equal([5, 300, 1800]);
    expect(parseRetrySchedule(' 5 , 60 ')).to.deep.equal([5, 60]);
    expect(parseRetrySchedule('')).to.deep.equal([]);
    expect(parseRetrySchedule('5,,60')).to.deep.equal({ problem: 'wait 2 must be a whole number of seconds from 1 to 604800; got ""' });
    expect(parseRetrySchedule('5,1.5')).to.deep.equal({ problem: 'wait 2 must be a whole number of seconds from 1 to 604800; got "1.5"' });
    expect(parseRetrySchedule('0')).to.deep.equal({ problem: 'wait 1 must be a whole number of seconds from 1 to 604800; got "0"' });
    expect(parseRetrySchedule('604801')).to.deep.equal({ problem: 'wait 1 must be a whole number of seconds from 1 to 604800; got "604801"' });
    expect(parseRetrySchedule(Array(21).fill('1').join(','))).to.deep.equal({ problem: 'at most 20 waits; got 21' });
  });
});
