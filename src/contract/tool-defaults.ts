import type { ToolRetrySettings } from './tool-catalog-entry';

/** Retry settings a tool gets when it declares none: 3 attempts (Google SRE), full jitter. */
export const DEFAULT_TOOL_RETRY = {
  maximumAttempts: 3,
  initialDelayMs: 200,
  maxDelayMs: 10_000,
  jitter: 'full',
  totalDeadlineMs: 120_000,
} as const satisfies ToolRetrySettings;

/** Start-to-close timeout of one tool attempt when the tool declares none. */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

/** Tool names the model can use: the function-name rule shared by the major model APIs. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Activity types the engine itself registers, and its built-in tools (`describe_tools`); no tool may take
 * these names. `default` is Temporal's fallback activity, which the engine uses to run tools that appear
 * after the worker started (MCP `list_changed`).
 */
export const RESERVED_ACTIVITY_NAMES = [
  'describeTools',
  'callModel',
  'callModelOnce',
  'default',
  'describe_tools',
  'evaluateApproval',
  'recordApprovalAudit',
] as const;
