/** Limits and engine-activity settings of an agent run. */
export const AGENT_RUN_DEFAULTS = {
  maxSteps: 50,
  maxTurns: 25,
} as const;

/** Activity options for the engine's own activities. */
export const ENGINE_ACTIVITY_OPTIONS = {
  describeTools: { startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 5 } },
  callModel: { startToCloseTimeout: '2 minutes', retry: { maximumAttempts: 3, initialInterval: '1 second' } },
} as const;

/** Longest activity summary shown in the UI. */
export const SUMMARY_MAX_LENGTH = 120;
