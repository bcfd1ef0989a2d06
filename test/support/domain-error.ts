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

/** The code of the DomainError the promise rejects with, or undefined when it resolves; any other error is thrown on. */
export async function codeOfRejection(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
  return undefined;
}
