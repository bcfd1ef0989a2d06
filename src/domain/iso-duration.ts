/**
 * An ISO 8601 duration in whole seconds (`PT1M33S`), rounded half up: common structured-data
 * validators refuse fractional seconds. Any finite non-negative length is written in digits,
 * never in exponent notation, however large.
 */
export function isoDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`a duration must be a finite non-negative number; got ${seconds}`);
  // Math.round rounds halves towards +Infinity, which for non-negative numbers is half up.
  const total = BigInt(Math.round(seconds));
  const hours = total / 3600n;
  const minutes = (total % 3600n) / 60n;
  const rest = total % 60n;
  const parts = [hours > 0n ? `${hours}H` : '', minutes > 0n ? `${minutes}M` : '', rest > 0n || total === 0n ? `${rest}S` : ''];
  return `PT${parts.join('')}`;
}
