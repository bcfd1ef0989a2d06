import { DomainError } from '../../src/domain/errors.js';

/** The code of the DomainError `fn` throws, or undefined when it throws none; any other error is thrown on. */
export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
  return undefined;
}
