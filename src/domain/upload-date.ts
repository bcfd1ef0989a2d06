/**
 * A video's upload date as a catalog gives it: an ISO 8601 calendar date (`2026-03-14`), or a
 * date-time with seconds and an offset (`2026-03-14T09:00:00Z`, `2026-03-14T09:00:00.5+01:00`).
 * A date-time without an offset names no instant, so search engines would have to guess the zone.
 */
const UPLOAD_DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2})))?$/;

/** Why a text is not an upload date: not written in the accepted form, or naming no real day or time. */
export type UploadDateProblem = 'format' | 'calendar';

export function uploadDateProblem(text: string): UploadDateProblem | null {
  const match = UPLOAD_DATE_PATTERN.exec(text);
  if (match === null) return 'format';
  // A group a plain date leaves out reads as zero.
  const group = (index: number): number => Number(match[index] ?? '0');
  const [year, month, day] = [group(1), group(2), group(3)];
  const dayExists = month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
  const timeExists = group(4) <= 23 && group(5) <= 59 && group(6) <= 59;
  const offsetExists = group(7) <= 23 && group(8) <= 59;
  return dayExists && timeExists && offsetExists ? null : 'calendar';
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
