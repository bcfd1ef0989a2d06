/**
 * The words of a failure, whatever was thrown: an Error's message, anything else as text. Every
 * log line's `reason`, every "could not be told" warning and every startup failure says it this way.
 */
export function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
