/**
 * The authority of a run (docs/security.md, "Authority of a run"): the tools a run may call, computed once at its
 * start by a trusted starter (the MCP server, or code holding the worker's store) and recorded in the worker's
 * durable store under the run's workflow id, never in the workflow's input alone. Types and pure set rules only.
 */
import type { CallerIdentity } from './caller-identity';

/** The memo field of a run started with a grant: the tools the grant names (what the store holds), in its history. */
export const GRANTED_TOOLS_MEMO = 'grantedTools';

/** The tools one run may call, as its trusted starter (or, for a child, the activity that prepared it) recorded them. */
export interface RunGrant {
  /** The run's workflow id (a grant is read by the workflow id Temporal tells the activity, never by its input). */
  workflowId: string;
  /** Every tool the run may call (sorted, no repeats); a child's is a subset of its parent's. */
  tools: string[];
  /** Who started the run (for a child, the holder of its parent's grant). */
  holder?: CallerIdentity;
  /** The parent run's workflow id, for a child run (sub-agent or handoff). */
  parentWorkflowId?: string;
  /** When the grant was recorded (ms since epoch). */
  grantedAt: number;
}

/**
 * The tools a run may call: those its starter asked for (`requested`, every tool when undefined) that the starter may
 * call (`mayCall`) and, for a child, its parent's (`parent`, no bound when undefined). Sorted, no repeats.
 */
export function grantedTools(
  candidates: readonly string[],
  rules: { requested?: readonly string[]; mayCall: (tool: string) => boolean; parent?: readonly string[] },
): string[] {
  const requested = rules.requested ? new Set(rules.requested) : undefined;
  const parent = rules.parent ? new Set(rules.parent) : undefined;
  const tools = candidates.filter(
    (tool) => (!requested || requested.has(tool)) && (!parent || parent.has(tool)) && rules.mayCall(tool),
  );
  return [...new Set(tools)].sort();
}
