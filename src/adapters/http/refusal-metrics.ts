import type { ServiceMetrics } from '../service-metrics.js';
import { DomainError, RateLimitExceeded, TooManyFailedAuthentications } from '../../domain/errors.js';

/** Counts a refusal by what refused it; the pipeline calls it with what it caught. */
export function countRefusal(metrics: ServiceMetrics, thrown: unknown): void {
  if (!(thrown instanceof DomainError)) return;
  if (thrown instanceof TooManyFailedAuthentications) metrics.rateLimitRejected('auth_failures');
  else if (thrown instanceof RateLimitExceeded) metrics.rateLimitRejected('key');
  else if (thrown.code === 'missing_api_key' || thrown.code === 'invalid_api_key') metrics.authenticationFailed(thrown.code);
}
