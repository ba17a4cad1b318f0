import { argumentsDigest } from './arguments-digest';
import { TOOL_ERROR_CODES } from '../contract/activity-protocol';
import { toolFailure } from '../contract/activity-protocol';

/**
 * Refuses, before anything runs, a call whose validated arguments are not the ones a human approved (their
 * digest differs): an approval given for one call is never used for other arguments.
 *
 * @throws a non-retryable `APPROVAL_MISMATCH` failure that had no effect.
 */
export function assertApprovedArguments(
  tool: string,
  validated: unknown,
  approvedDigest: string,
  attempt: number,
): void {
  let digest: string | undefined;
  try {
    digest = argumentsDigest(validated);
  } catch {
    digest = undefined;
  }
  if (digest === approvedDigest) return;
  throw toolFailure(
    {
      status: 'error',
      code: TOOL_ERROR_CODES.APPROVAL_MISMATCH,
      message: `The arguments of "${tool}" are not the ones that were approved (digest ${digest ?? 'unavailable'}, approved ${approvedDigest}); nothing was run.`,
      hint: 'Do not repeat the call; ask for a new approval with the arguments you mean.',
      retryable: false,
      // The attempt that refused it counts, as on its span (the tool did not run).
      attempts: attempt,
    },
    { mayHaveHadEffect: false },
  );
}
