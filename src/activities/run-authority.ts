import { checkStoreUnavailable } from './store-failure';
import { TOOL_ERROR_CODES, toolFailure, type ToolErrorObservation } from '../contract/activity-protocol';
import { READ_STORED_OUTPUT_TOOL } from '../contract/claim-check-reference';
import { grantedTools, type RunGrant } from '../contract/run-grant';
import { subAgentWorkflowId, type SubAgentSpec } from '../contract/sub-agent-spec';
import type { ToolActivityInput } from '../contract/tool-activity-types';
import type { ToolRetrySettings } from '../contract/tool-catalog-entry';
import type { RunGrantStore } from '../stores/audit/run-grant-store';
import type { Tool } from '../tools/define-tool';
import type { ToolRegistry } from '../tools/tool-registry';

/** Grants read per worker process: immutable once written, so remembered (bounded). */
const GRANT_CACHE_SIZE = 10_000;

/** The authority settings of a worker (`createWorker({ authority })`; docs/security.md, "Authority of a run"). */
export interface WorkerAuthorityConfig {
  /**
   * Tools that need a grant: a run without one (a workflow of one's own, a hand-made activity call, a run started
   * without a grant) never calls them (`TOOL_NOT_PERMITTED`). Default none: a team's own workflows call every tool.
   */
  restrictedTools?: Iterable<string>;
  /** Where the runs' grants are recorded (default: the worker's audit store, which keeps them in a table of its own). */
  grants?: RunGrantStore;
}

/** What the tool activity checks a run's authority against (docs/security.md, "Authority of a run"). */
export interface RunAuthorityDeps {
  registry: ToolRegistry;
  /** Where trusted starters recorded the runs' grants; none: no run has a grant. */
  grants: RunGrantStore | undefined;
  /** Tools only a run whose grant names them may call: a run without a grant never calls them. */
  restrictedTools: ReadonlySet<string>;
}

/** The call being checked: its tool, its input, the run Temporal says scheduled it, and its retry settings. */
export interface AuthorityCall {
  tool: Tool;
  input: ToolActivityInput;
  /** The workflow id of the activity's run, from Temporal's activity info (never from the input). */
  workflowId: string;
  attempt: number;
  retry: ToolRetrySettings;
}

/** The authority checks of one worker: grants read once per run and kept. */
export class RunAuthority {
  private readonly cache = new Map<string, RunGrant | null>();

  constructor(private readonly deps: RunAuthorityDeps) {}

  /**
   * Refuses, before anything runs, a call outside its run's authority, whoever scheduled it: a run with a grant calls
   * only the tools it names; a run without one never calls a restricted tool. An engine compensation is judged as the
   * call it undoes; `read_stored_output` (the run's own stored outputs) is always allowed.
   *
   * @throws a non-retryable `TOOL_NOT_PERMITTED` failure that had no effect; a retryable `UNAVAILABLE` one when the
   * grant store cannot be read.
   */
  async assertPermitted(call: AuthorityCall): Promise<void> {
    const tool = this.judgedTool(call);
    if (tool === READ_STORED_OUTPUT_TOOL) return;
    const restricted = this.deps.restrictedTools.has(tool);
    if (!this.deps.grants) {
      if (restricted) throw notPermitted(tool, call, 'it is restricted and this worker reads no grants');
      return;
    }
    const grant = await this.grantOf(call.workflowId).catch((error: unknown) => {
      throw checkStoreUnavailable(call, 'grant store could not be read to check the authority', error);
    });
    if (grant && !grant.tools.includes(tool))
      throw notPermitted(tool, call, `the run's grant does not name it (it names ${listed(grant.tools)})`);
    if (!grant && restricted) throw notPermitted(tool, call, 'it is restricted and the run has no grant that names it');
  }

  /**
   * After an agent tool's call built its child's spec: records the child's grant (under the child's workflow id,
   * before the child starts), the tools the spec asks for that its parent may call: those its parent's grant names
   * and its run's tools (`runTools`, the parent's `allowedTools`); without a parent grant, no restricted tool. Only
   * for a run with a grant or `runTools`, and only for a call whose key is its own run's (a call under another run's
   * key prepares no grant). Answers the child's recorded grant, if any.
   */
  async grantChild(call: AuthorityCall, spec: unknown): Promise<RunGrant | undefined> {
    const grants = this.deps.grants;
    if (!grants || !isSpec(spec) || !call.input.idempotencyKey.startsWith(`${call.workflowId}/`)) return undefined;
    const declared = Array.isArray(call.input.runTools) ? new Set(call.input.runTools) : undefined;
    try {
      const parent = await this.grantOf(call.workflowId);
      if (!parent && !declared) return undefined;
      const childId = subAgentWorkflowId(call.input.idempotencyKey, call.tool.contract.name);
      const mayCall = (tool: string) =>
        (!declared || declared.has(tool)) && (parent !== undefined || !this.deps.restrictedTools.has(tool));
      const tools = grantedTools(spec.allowedTools, { ...(parent ? { parent: parent.tools } : {}), mayCall });
      const recorded = await grants.recordGrant({
        workflowId: childId,
        tools,
        ...(parent?.holder ? { holder: parent.holder } : {}),
        parentWorkflowId: call.workflowId,
        grantedAt: Date.now(),
      });
      this.remember(childId, recorded);
      return recorded;
    } catch (error) {
      throw checkStoreUnavailable(call, 'grant store could not be read to check the authority', error);
    }
  }

  /** The tool whose authority the call needs: the forward tool of an engine compensation, else its own. */
  private judgedTool(call: AuthorityCall): string {
    const name = call.tool.contract.name;
    const forward = call.input.compensationOf;
    if (typeof forward !== 'string' || !call.input.idempotencyKey.endsWith('/undo')) return name;
    return this.deps.registry.get(forward)?.contract.catalogEntry.undo === name ? forward : name;
  }

  private async grantOf(workflowId: string): Promise<RunGrant | undefined> {
    const cached = this.cache.get(workflowId);
    if (cached !== undefined) return cached ?? undefined;
    const grant = await this.deps.grants!.grantOf(workflowId);
    this.remember(workflowId, grant ?? null);
    return grant;
  }

  private remember(workflowId: string, grant: RunGrant | null): void {
    if (this.cache.size >= GRANT_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(workflowId, grant);
  }
}

function isSpec(value: unknown): value is SubAgentSpec {
  return (
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as SubAgentSpec).allowedTools) &&
    (value as SubAgentSpec).allowedTools.every((t) => typeof t === 'string')
  );
}

function listed(tools: readonly string[]): string {
  if (tools.length === 0) return 'no tool';
  const shown = tools.slice(0, 20).join(', ');
  return tools.length > 20 ? `${shown}, ...` : shown;
}

/** The refusal of a call outside the run's authority; its attempt counts, as on the attempt's span (the tool did not run). */
function notPermitted(tool: string, call: AuthorityCall, why: string): ReturnType<typeof toolFailure> {
  const observation: ToolErrorObservation = {
    status: 'error',
    code: TOOL_ERROR_CODES.TOOL_NOT_PERMITTED,
    message: `The run ${call.workflowId} may not call "${tool}": ${why}. Nothing was run.`,
    hint: 'Do not call this tool again in this run; use the tools you were given or finish.',
    retryable: false,
    attempts: call.attempt,
  };
  return toolFailure(observation, { mayHaveHadEffect: false });
}
