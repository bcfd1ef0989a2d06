import { expect } from 'chai';
import fc from 'fast-check';
import { uploadDateProblem } from '../../src/domain/upload-date.js';

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

describe('upload date', function () {
  it('accepts every instant written as a date, or as a date-time with Z or an offset', function () {
    const instants = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true });
    fc.assert(fc.property(instants, fc.integer({ min: -14, max: 14 }), (instant, offsetHours) => {
      const utc = instant.toISOString();
      expect(uploadDateProblem(utc), utc).to.equal(null);
      expect(uploadDateProblem(utc.slice(0, 10)), utc).to.equal(null);
      const withOffset = `${utc.slice(0, 19)}${offsetHours < 0 ? '-' : '+'}${pad(Math.abs(offsetHours))}:30`;
      expect(uploadDateProblem(withOffset), withOffset).to.equal(null);
      expect(uploadDateProblem(utc.slice(0, 19)), 'no offset').to.equal('format');
    }));
  });

  it('accepts a day exactly when the calendar has it', function () {
    fc.assert(fc.property(fc.integer({ min: 1, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }), (year, month, day) => {
      const date = new Date(0);
      date.setUTCFullYear(year, month - 1, day);
      const exists = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
      const text = `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
      expect(uploadDateProblem(text), text).to.equal(exists ? null : 'calendar');
    }));
  });
});
