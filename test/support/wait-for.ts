/**
 * Waits until `condition` returns a value other than undefined/false, polling every `intervalMs`; fails with
 * `what` after `timeoutMs` (generous by default: tests run on loaded machines).
 */
export async function waitFor<T>(
  what: string,
  condition: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 60_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `Timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}.`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
