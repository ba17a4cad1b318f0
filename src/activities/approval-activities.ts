import { ApplicationFailure } from '@temporalio/common';
import type { ApprovalAuditRecord, ApprovalEvaluation, EvaluateApprovalInput } from '../contract/approval-types';
import { argumentsDigest } from './arguments-digest';
import type { AuditStore } from '../stores/audit/audit-store';
import { MemoryAuditStore } from '../stores/audit/memory-audit-store';
import type { Tool } from '../tools/define-tool';
import { parseToolArguments } from '../guard/parse-tool-arguments';
import { toolArgumentGuard } from '../guard/argument-guard-options';
import { ARGUMENT_GUARD_LIMITS, type ArgumentGuardLimits } from '../guard/json-arguments';
import { ENGINE_FAILURE_TYPES, TOOL_ERROR_CODES } from '../contract/activity-protocol';
import type { ToolRegistry } from '../tools/tool-registry';
import type { MeterProvider } from '@opentelemetry/api';
import { createEngineMetrics } from '../telemetry/engine-metrics';
import { approvalWaitEnded } from '../telemetry/approval-telemetry';

/** Worker-side approval settings (`createWorker({ approvals })`). */
export interface WorkerApprovalConfig {
  /**
   * Let runs waive a tool's own approval (`approval: { tools: { pay: 'never' } }` in the run input).
   * Default false: a run may require approval for more tools, never for fewer.
   */
  allowRunsToWaive?: boolean;
}

/** Dependencies of {@link createApprovalActivities}. */
export interface ApprovalActivityDeps extends WorkerApprovalConfig {
  registry: ToolRegistry;
  /** Where the audit trail goes (default: this process's memory). */
  auditStore?: AuditStore;
  /** The worker's argument guard limits (resolved); a tool's own `argumentGuard` overrides them. */
  argumentGuard?: ArgumentGuardLimits;
  /** Where the engine's metrics go (default: the global OpenTelemetry meter provider). */
  meterProvider?: MeterProvider;
}

/** The engine's approval activities, registered by `createWorker`. */
export interface ApprovalActivities {
  /**
   * Validates a call's arguments and evaluates the tool's approval policy (predicates run here, on the
   * worker), with the run's override. When approval is required it computes the digest of the validated
   * arguments and writes the audit record's request. Recorded in history: replay never evaluates again.
   */
  evaluateApproval(input: EvaluateApprovalInput): Promise<ApprovalEvaluation>;
  /** Writes (completes) the audit record of a gated call. */
  recordApprovalAudit(record: ApprovalAuditRecord): Promise<void>;
}

/**
 * Builds the approval activities of a worker.
 *
 * @example
 * ```ts
 * const activities = createApprovalActivities({ registry, auditStore: createAuditStore() });
 * ```
 */
export function createApprovalActivities(deps: ApprovalActivityDeps): ApprovalActivities {
  const auditStore = deps.auditStore ?? new MemoryAuditStore();
  const metrics = createEngineMetrics(deps.meterProvider);
  return {
    evaluateApproval: async (input) => {
      const evaluation = await evaluate(input, deps);
      if (evaluation.status === 'required') {
        await writeAudit(auditStore, {
          idempotencyKey: input.idempotencyKey,
          workflowId: input.workflowId,
          stepId: input.stepId,
          tool: input.tool,
          argumentsDigest: evaluation.digest,
          arguments: evaluation.arguments,
          requestedAt: input.requestedAt,
          deadline: input.deadline,
        });
      }
      return evaluation;
    },
    recordApprovalAudit: async (record) => {
      await writeAudit(auditStore, record);
      approvalWaitEnded(metrics, record);
    },
  };
}

async function evaluate(input: EvaluateApprovalInput, deps: ApprovalActivityDeps): Promise<ApprovalEvaluation> {
  const notes: string[] = [];
  const tool = deps.registry.get(input.tool);
  if (!tool) {
    return {
      status: 'invalid',
      notes,
      observation: {
        status: 'error',
        code: TOOL_ERROR_CODES.TOOL_NOT_REGISTERED,
        message: `Tool "${input.tool}" is in the catalog but the worker that evaluated its approval does not implement it.`,
        hint: 'Do not call this tool again in this run; use another tool or finish.',
        retryable: false,
        attempts: 0,
      },
    };
  }
  const limits = toolArgumentGuard(deps.argumentGuard ?? ARGUMENT_GUARD_LIMITS, tool.contract.spec.argumentGuard);
  const parsed = parseToolArguments(tool.contract.spec.input, input.arguments, limits);
  if (!parsed.ok) return { status: 'invalid', observation: parsed.error, notes };

  let required = await declaredRequirement(tool, parsed.value, notes);
  if (input.runOverride === 'always') required = true;
  if (input.runOverride === 'never' && required) {
    if (deps.allowRunsToWaive) required = false;
    else
      notes.push(
        `The run asked to waive approval for "${input.tool}", but this worker does not allow runs to waive approval: it is still required.`,
      );
  }
  if (!required) return { status: 'not_required', notes };
  let digest: string;
  let shown: unknown;
  try {
    digest = argumentsDigest(parsed.value);
    shown = JSON.parse(JSON.stringify(parsed.value)) as unknown;
  } catch (error) {
    return {
      status: 'invalid',
      notes,
      observation: {
        status: 'error',
        code: TOOL_ERROR_CODES.INVALID_ARGUMENTS,
        message: `The arguments of "${input.tool}" cannot be shown to an approver: ${(error as Error).message}`,
        hint: 'Call the tool with plain JSON arguments.',
        retryable: false,
        attempts: 0,
      },
    };
  }
  return { status: 'required', digest, arguments: shown, notes };
}

/** What the tool itself says; a predicate that throws means approval is required. */
async function declaredRequirement(tool: Tool, validated: unknown, notes: string[]): Promise<boolean> {
  const declared = tool.contract.spec.approval as unknown;
  if (typeof declared === 'function') {
    try {
      return Boolean(await (declared as (input: unknown) => boolean | Promise<boolean>)(validated));
    } catch (error) {
      notes.push(
        `The approval predicate of "${tool.contract.name}" failed (${error instanceof Error ? error.message : String(error)}): approval is required.`,
      );
      return true;
    }
  }
  // 'conditional' without a predicate on this worker: ask, rather than let it through.
  return tool.contract.catalogEntry.approval !== 'never';
}

async function writeAudit(store: AuditStore, record: ApprovalAuditRecord): Promise<void> {
  try {
    await store.write(record);
  } catch (error) {
    throw ApplicationFailure.create({
      type: ENGINE_FAILURE_TYPES.AUDIT_STORE_UNAVAILABLE,
      message: `The audit record of ${record.idempotencyKey} could not be written: ${(error as Error).message}`,
      cause: error instanceof Error ? error : undefined,
    });
  }
}
