import { ApplicationFailure } from '@temporalio/common';
import type {
  ApprovalAuditRecord,
  ApprovalEvaluation,
  EditedArgumentsReview,
  EvaluateApprovalInput,
  ReviewEditedArgumentsInput,
} from '../contract/approval-types';
import { argumentsDigest } from './arguments-digest';
import type { AuditStore } from '../stores/audit/audit-store';
import { MemoryAuditStore } from '../stores/audit/memory-audit-store';
import { declaredRequirement } from './approval-requirement';
import { parseToolArguments } from '../guard/parse-tool-arguments';
import { toolArgumentGuard } from '../guard/argument-guard-options';
import { ARGUMENT_GUARD_LIMITS, type ArgumentGuardLimits } from '../guard/json-arguments';
import { ENGINE_FAILURE_TYPES, TOOL_ERROR_CODES, type ToolErrorObservation } from '../contract/activity-protocol';
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
  /**
   * Validates an approver's edited arguments with the tool's schema (the argument guard, as for the model's) and
   * computes their digest: the call runs with them only if they validate. Recorded in history.
   */
  reviewEditedArguments(input: ReviewEditedArgumentsInput): Promise<EditedArgumentsReview>;
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
      const { evaluation, waived } = await evaluate(input, deps);
      if (evaluation.status === 'required') {
        await writeAudit(auditStore, requestRecord(input, evaluation.digest, evaluation.arguments));
      } else if (waived) {
        // The tool activity runs a gated call only on a recorded decision: the run's waiver is one.
        await writeAudit(auditStore, {
          ...requestRecord(input, waived.digest, waived.arguments),
          decision: 'waived',
          decidedBy: WAIVER_DECIDER,
          reason: `The run waived the approval of "${input.tool}" and this worker allows runs to waive.`,
          decidedAt: input.requestedAt,
        });
      }
      return evaluation;
    },
    recordApprovalAudit: async (record) => {
      await writeAudit(auditStore, record);
      approvalWaitEnded(metrics, record);
    },
    reviewEditedArguments: async (input) => reviewEdited(input, deps),
  };
}

/** The edited arguments validated by the tool's schema and shown as they will run, or why not. */
function reviewEdited(input: ReviewEditedArgumentsInput, deps: ApprovalActivityDeps): EditedArgumentsReview {
  const tool = deps.registry.get(input.tool);
  if (!tool) return { ok: false, observation: notRegistered(input.tool) };
  const limits = toolArgumentGuard(deps.argumentGuard ?? ARGUMENT_GUARD_LIMITS, tool.contract.spec.argumentGuard);
  const parsed = parseToolArguments(tool.contract.spec.input, input.arguments, limits);
  if (!parsed.ok) return { ok: false, observation: parsed.error };
  const shown = shownArguments(input.tool, parsed.value);
  if ('observation' in shown) return { ok: false, observation: shown.observation };
  return { ok: true, digest: shown.digest, arguments: shown.arguments };
}

/** Who decided a waived call, in its audit record: the run's approval policy. */
const WAIVER_DECIDER = 'run approval policy';

/** The audit record of a call's approval request. */
function requestRecord(input: EvaluateApprovalInput, digest: string, shown: unknown): ApprovalAuditRecord {
  return {
    idempotencyKey: input.idempotencyKey,
    workflowId: input.workflowId,
    stepId: input.stepId,
    tool: input.tool,
    argumentsDigest: digest,
    arguments: shown,
    requestedAt: input.requestedAt,
    deadline: input.deadline,
  };
}

/** The evaluation, and the digest and arguments of a call the run's waiver lets through without asking. */
interface Evaluated {
  evaluation: ApprovalEvaluation;
  waived?: { digest: string; arguments: unknown };
}

async function evaluate(input: EvaluateApprovalInput, deps: ApprovalActivityDeps): Promise<Evaluated> {
  const notes: string[] = [];
  const tool = deps.registry.get(input.tool);
  if (!tool) return { evaluation: { status: 'invalid', notes, observation: notRegistered(input.tool) } };
  const limits = toolArgumentGuard(deps.argumentGuard ?? ARGUMENT_GUARD_LIMITS, tool.contract.spec.argumentGuard);
  const parsed = parseToolArguments(tool.contract.spec.input, input.arguments, limits);
  if (!parsed.ok) return { evaluation: { status: 'invalid', observation: parsed.error, notes } };

  const declared = await declaredRequirement(tool, parsed.value, notes);
  const required = input.runOverride === 'always' || (declared && !waives(input, deps, notes));
  if (!required && !declared) return { evaluation: { status: 'not_required', notes } };
  // Shown to an approver, or recorded as waived: either way the digest the tool activity will check.
  const shown = shownArguments(input.tool, parsed.value);
  if ('observation' in shown) return { evaluation: { status: 'invalid', observation: shown.observation, notes } };
  if (!required) return { evaluation: { status: 'not_required', notes }, waived: shown };
  return { evaluation: { status: 'required', digest: shown.digest, arguments: shown.arguments, notes } };
}

/** Whether the run's waiver (`approval.tools[tool] = 'never'`) holds on this worker; `notes` says when not. */
function waives(input: EvaluateApprovalInput, deps: ApprovalActivityDeps, notes: string[]): boolean {
  if (input.runOverride !== 'never') return false;
  if (deps.allowRunsToWaive) return true;
  notes.push(
    `The run asked to waive approval for "${input.tool}", but this worker does not allow runs to waive approval: it is still required.`,
  );
  return false;
}

/** The digest and a plain JSON copy of validated arguments, or why they cannot be shown to an approver. */
function shownArguments(
  tool: string,
  validated: unknown,
): { digest: string; arguments: unknown } | { observation: ToolErrorObservation } {
  try {
    return { digest: argumentsDigest(validated), arguments: JSON.parse(JSON.stringify(validated)) as unknown };
  } catch (error) {
    return {
      observation: {
        status: 'error',
        code: TOOL_ERROR_CODES.INVALID_ARGUMENTS,
        message: `The arguments of "${tool}" cannot be shown to an approver: ${(error as Error).message}`,
        hint: 'Call the tool with plain JSON arguments.',
        retryable: false,
        attempts: 0,
      },
    };
  }
}

function notRegistered(tool: string): ToolErrorObservation {
  return {
    status: 'error',
    code: TOOL_ERROR_CODES.TOOL_NOT_REGISTERED,
    message: `Tool "${tool}" is in the catalog but the worker that evaluated its approval does not implement it.`,
    hint: 'Do not call this tool again in this run; use another tool or finish.',
    retryable: false,
    attempts: 0,
  };
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
