import { thisProcessHolder } from '../activities/holder-identity';
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { createApprovalActivities, type WorkerApprovalConfig } from '../activities/approval-activities';
import { createFusedStepActivities } from '../activities/fused-step';
import { createModelActivities } from '../activities/model-activities';
import { createRecordedModelActivities } from '../activities/recorded-model-turn';
import { createToolActivities } from '../activities/tool-activities';
import type { WorkerAuthorityConfig } from '../activities/run-authority';
import type { ModelProvider } from '../contract/model-types';
import type { ArgumentGuardLimits } from '../guard/json-arguments';
import type { AuditStore } from '../stores/audit/audit-store';
import type { IdempotencyStore } from '../stores/idempotency/idempotency-store';
import type { StreamStore } from '../stores/streams/stream-store';
import type { ToolLimitStore } from '../stores/limits/tool-limit-store';
import type { TranscriptStore } from '../stores/transcripts/transcript-store';
import type { ToolRegistry } from '../tools/tool-registry';
import { planChainedTurn } from '../workflows/fused-chain-plan';
import { clearCatalog } from '../workflows/fused-clearance';
import { planFusedCalls } from '../workflows/fused-step-plan';

/** What {@link createEngineActivities} builds the engine's activities from: resolved, nothing left to default. */
export interface EngineActivityDeps {
  /** The tools (the worker's own, MCP servers' and `read_stored_output`). */
  registry: ToolRegistry;
  /** Model providers by name (`scripted` is built in). */
  modelProviders: Record<string, ModelProvider>;
  /** Idempotency keys of calls with effects, and the fast path's recorded turns. */
  idempotencyStore: IdempotencyStore;
  /** Transcripts and claim checks (the tool activities write them, the model activities and the pager read them). */
  transcripts: TranscriptStore;
  /** The audit trail: the approval gate writes it, the tool activities read the decisions it holds. */
  auditStore: AuditStore;
  /** Slots, rate windows and breakers of tools with limits (none: a memory store of this process). */
  limitStore?: ToolLimitStore;
  /** Lease of a held slot (default 30 s). */
  slotLeaseMs?: number;
  /** Live streams of model turns and tool progress (none: nothing streamed). */
  streams?: StreamStore;
  /** Whether runs may waive a tool's approval. */
  approvals?: WorkerApprovalConfig;
  /** The tools that need a grant, and where grants are read (default: the audit store). */
  authority?: WorkerAuthorityConfig;
  /** The worker's argument guard limits, resolved (`resolveArgumentGuard`). */
  argumentGuard?: ArgumentGuardLimits;
  random?: () => number;
  leaseMs?: number;
  deadHolderDrainMs?: number | false;
  meterProvider?: MeterProvider;
  /** The worker's tracer provider when it traces (the model calls' `chat` spans). */
  tracerProvider?: TracerProvider;
}

/** The engine's activities by activity type (what `Worker.create({ activities })` takes). */
export type EngineActivities = Record<string, (...args: never[]) => Promise<unknown>>;

/**
 * The engine's activities, built once from resolved dependencies: one per tool (activity type = tool name) and
 * `describeTools`, the approval gate, the model call, the fast path's recorded turn and fused step. The plugin
 * (`durableTools`) and `createWorker` both register these; the same audit store goes to the approval gate,
 * which writes decisions, and to the tool activities, which check them.
 */
export function createEngineActivities(deps: EngineActivityDeps): EngineActivities {
  const telemetry = deps.meterProvider ? { meterProvider: deps.meterProvider } : {};
  const streams = deps.streams ? { streams: deps.streams } : {};
  const modelActivities = createModelActivities({
    registry: deps.registry,
    providers: deps.modelProviders,
    transcripts: deps.transcripts,
    // One probe of a provider that is down across the workers sharing the store (docs/models.md).
    probeSlots: { store: deps.idempotencyStore, owner: thisProcessHolder().owner },
    ...streams,
    ...telemetry,
    ...(deps.tracerProvider ? { tracerProvider: deps.tracerProvider } : {}),
  });
  const toolActivities = createToolActivities({
    registry: deps.registry,
    idempotencyStore: deps.idempotencyStore,
    // The activity refuses a gated call without a decision the approval gate recorded in this trail.
    auditStore: deps.auditStore,
    ...(deps.approvals?.allowRunsToWaive !== undefined ? { allowRunsToWaive: deps.approvals.allowRunsToWaive } : {}),
    // A run calls only the tools of its authority: its grant's, and no restricted tool without one.
    ...(deps.authority?.grants ? { grants: deps.authority.grants } : {}),
    ...(deps.authority?.restrictedTools ? { restrictedTools: deps.authority.restrictedTools } : {}),
    payloadStore: deps.transcripts,
    ...(deps.random ? { random: deps.random } : {}),
    ...(deps.leaseMs !== undefined ? { leaseMs: deps.leaseMs } : {}),
    ...(deps.deadHolderDrainMs !== undefined ? { deadHolderDrainMs: deps.deadHolderDrainMs } : {}),
    ...(deps.argumentGuard ? { argumentGuard: deps.argumentGuard } : {}),
    ...(deps.limitStore ? { limitStore: deps.limitStore } : {}),
    ...(deps.slotLeaseMs !== undefined ? { slotLeaseMs: deps.slotLeaseMs } : {}),
    ...streams,
    ...telemetry,
  });
  const recordedTurns = createRecordedModelActivities({
    callModel: modelActivities.callModel,
    store: deps.idempotencyStore,
  });
  return {
    ...toolActivities,
    ...createApprovalActivities({
      registry: deps.registry,
      ...deps.approvals,
      auditStore: deps.auditStore,
      ...(deps.argumentGuard ? { argumentGuard: deps.argumentGuard } : {}),
      ...telemetry,
    }),
    ...modelActivities,
    // The fast path's model turn: recorded under its key in the idempotency store (docs/fast-path.md).
    ...recordedTurns,
    // The fused step: the recorded turn, then the calls it pre-cleared, through the tool activities above.
    ...createFusedStepActivities({
      callModelOnce: recordedTurns.callModelOnce,
      tools: toolActivities,
      plan: planFusedCalls,
      chain: planChainedTurn,
      // The first fused step reads the catalog itself and clears it as the workflow would.
      describeTools: () => toolActivities.describeTools(),
      clear: clearCatalog,
    }),
  } as EngineActivities;
}
