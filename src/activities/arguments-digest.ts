import { fingerprint } from '../stores/idempotency/canonical-json';

/**
 * The digest an approval is bound to: lowercase hex SHA-256 of the canonical JSON (RFC 8785 style, keys
 * sorted) of the validated arguments, the same function as the idempotency store's fingerprint. Two calls
 * with the same data in another key order have the same digest; any other change gives another digest.
 *
 * @throws `IdempotencyStoreError` (`NOT_JSON`) when the arguments are not JSON.
 */
export function argumentsDigest(validatedArguments: unknown): string {
  return fingerprint(validatedArguments);
}
