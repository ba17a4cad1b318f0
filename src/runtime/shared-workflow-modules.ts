/**
 * The engine's workflow modules that every run of a worker shares (Temporal's `bundlerOptions.preloadModules`):
 * evaluated once when the worker's V8 context is made, instead of once per run, and so compiled and optimised
 * once for all runs. Without it, every run evaluates its own copy of each module, and a function of it starts
 * in V8's interpreter again in every run: `transcriptChecksum`, a loop over the transcript delta's JSON, took
 * ~1 ms of the workflow thread per 10-step fast-path run that way (docs/benchmarks.md, "Shared workflow
 * modules").
 *
 * Only pure modules can be shared: they and everything they import at run time import no package (no
 * `@temporalio/workflow`, whose state is per run), hold no state at module level (no `let`, no Map or Set, no
 * private object a function could change) and run nothing when loaded. Temporal freezes what they export.
 * test/unit/shared-workflow-modules.test.ts checks each of these against those rules.
 */
const SHARED_WORKFLOW_MODULES = [
  '../contract/approval-policy',
  '../contract/approval-types',
  '../contract/bound-observation',
  '../contract/claim-check-reference',
  '../contract/dry-run-types',
  '../contract/durable-tools-error',
  '../contract/fast-path',
  '../contract/fetch-tool-result',
  '../contract/model-call-limits',
  '../contract/payload-limits',
  '../contract/run-outcome-statuses',
  '../contract/sensitive-arguments',
  '../contract/sub-agent-spec',
  '../contract/tool-budget',
  '../contract/tool-defaults',
  '../contract/tool-definition-error',
  '../contract/tool-disclosure',
  '../contract/tool-visibility',
  '../contract/transcript-checksum',
  '../workflows/approval-details',
  '../workflows/failure-policy',
  '../workflows/handoff-conversation',
  '../workflows/model-turn-issue',
  '../workflows/run-carry-over',
  '../workflows/run-limits',
  '../workflows/run-loop-state',
  '../workflows/run-transcript',
  '../workflows/run-usage',
  '../workflows/step-observation',
  '../workflows/turn-observations',
  '../workflows/turn-verdict',
] as const;

/**
 * The resolved paths of the shared workflow modules, for `bundleWorkflowCode({ preloadModules })` or a
 * worker's `bundlerOptions.preloadModules` (the engine's own workflows only: they are modules of its bundle).
 */
export function sharedWorkflowModulePaths(): string[] {
  return SHARED_WORKFLOW_MODULES.map((module) => require.resolve(module));
}
