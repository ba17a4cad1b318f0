import { setCurrentDetails, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { getRunStateQuery } from '../contract/agent-run-messages';
import type { AgentRunState } from '../contract/agent-run-types';
import type { ApprovalDecisionInput } from '../contract/approval-types';
import { decideApprovalUpdate } from '../contract/approval-messages';
import { SEARCH_ATTRIBUTES } from '../contract/search-attributes';
import { decide, validateDecision, type ApprovalGate } from './approval-gate';
import { waitingDetails } from './approval-details';
import { boundedRunView } from './run-budget';

/*
 * The approvals of a user's own workflow (durable-tools/workflow). Calls made with `callTool`/`proxyTools` and
 * agents run with `runAgent` each have a gate (their own approval policy and waiting calls), but a workflow has
 * one `decideApproval` update and one `getRunState` query: the desk installs both, once per workflow execution
 * and only when a gate first opens, and routes each decision to the gate whose call it names. So
 * `durable-tools approve <workflowId> <step>` and the approval client work on the user's workflow as on an
 * `agentRun`. The desk is per-execution state, kept on the workflow's global object (see workflow-call-scope.ts).
 */

/** The approval gates of this workflow execution, oldest first, and whether its handlers are installed. */
interface Desk {
  gates: ApprovalGate[];
  /** The run states the query shows, by gate: an embedded agent's state, or the state of the plain calls. */
  views: Map<ApprovalGate, () => AgentRunState>;
}

/** Where the desk lives: on the workflow's global object, one per execution (see workflow-call-scope.ts). */
const DESK = Symbol.for('durable-tools.approvalDesk');

/**
 * Adds a gate to the workflow's desk, installing the desk's update and query handlers the first time. `view`
 * is what the `getRunState` query shows of the gate's calls (the latest agent's state wins; waiting calls of
 * every gate are added, so the approval client finds them all).
 */
export function joinApprovalDesk(gate: ApprovalGate, view: () => AgentRunState): void {
  const globals = globalThis as { [DESK]?: Desk };
  const current = (globals[DESK] ??= installDesk());
  current.gates.push(gate);
  current.views.set(gate, view);
  gate.publish = () => publishDesk(current);
}

function installDesk(): Desk {
  const created: Desk = { gates: [], views: new Map() };
  setHandler(decideApprovalUpdate, (input) => decide(routeDecision(created, input), input), {
    validator: (input) => validateDecision(routeDecision(created, input), input),
  });
  setHandler(getRunStateQuery, () => deskView(created));
  return created;
}

/**
 * The gate a decision is for: the one whose call of that step waits with that digest, else one whose call of
 * that step waits, else the newest gate that knows the step (it explains why it is not waiting), else the
 * newest gate (it says the step is unknown).
 */
export function routeDecision(current: Pick<Desk, 'gates'>, input: ApprovalDecisionInput): ApprovalGate {
  const stepId = input && typeof input === 'object' ? input.stepId : undefined;
  const newestFirst = [...current.gates].reverse();
  const waiting = newestFirst.filter((gate) => gate.waiting.has(stepId as number));
  return (
    waiting.find((gate) => gate.waiting.get(stepId as number)?.digest === input?.digest) ??
    waiting[0] ??
    newestFirst.find((gate) => gate.state.steps.some((step) => step.stepId === stepId)) ??
    newestFirst[0]!
  );
}

/** The query's answer: the newest gate's view, with the waiting calls of the other gates added. */
function deskView(current: Desk): AgentRunState {
  const newest = current.gates[current.gates.length - 1]!;
  const view = boundedRunView(current.views.get(newest)!());
  for (const gate of current.gates) {
    if (gate === newest) continue;
    for (const { step } of gate.waiting.values()) view.steps.push(step);
  }
  return view;
}

/** Shows the waiting calls of every gate in the workflow's current details and, when tracked, the search attribute. */
function publishDesk(current: Desk): void {
  const waiting = current.gates.flatMap((gate) => [...gate.waiting.values()]);
  setCurrentDetails(waitingDetails(workflowInfo().workflowId, waiting));
  if (!current.gates.some((gate) => gate.track)) return;
  const tools = [...new Set(waiting.map((w) => w.step.tool))].sort();
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.awaitingApproval, value: tools.length > 0 ? tools : null }]);
}
