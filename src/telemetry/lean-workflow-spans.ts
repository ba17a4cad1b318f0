import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import type { InjectedSinks } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';

/**
 * The `WorkflowInfo` fields a workflow span keeps as attributes: the ids an operator looks a run up by, its type,
 * task queue, namespace and attempt. Temporal's workflow span exporter copies the whole `WorkflowInfo` (34 fields:
 * memo, search attributes, retry policy, parent and root, last failure, history size...) onto every span the
 * workflow exports, nested values included — most of a traced run's span bytes (docs/telemetry.md, "Lean workflow
 * spans").
 */
export const WORKFLOW_SPAN_INFO_FIELDS = [
  'workflowId',
  'runId',
  'workflowType',
  'taskQueue',
  'namespace',
  'attempt',
  'firstExecutionRunId',
  'continuedFromExecutionRunId',
] as const satisfies ReadonlyArray<keyof WorkflowInfo>;

/** Which `WorkflowInfo` fields a workflow span carries: {@link WORKFLOW_SPAN_INFO_FIELDS} (`lean`), or all (`all`). */
export type WorkflowSpanInfo = 'lean' | 'all';

type WorkflowExporter = InjectedSinks<OpenTelemetrySinks>['exporter'];

/** The fields of {@link WORKFLOW_SPAN_INFO_FIELDS} that `info` has, as plain strings and numbers. */
export function leanWorkflowInfo(info: WorkflowInfo): WorkflowInfo {
  const kept: Record<string, string | number> = {};
  for (const field of WORKFLOW_SPAN_INFO_FIELDS) {
    const value: unknown = info[field];
    if (typeof value === 'string' || typeof value === 'number') kept[field] = value;
  }
  // The exporter only copies the fields onto the span's attributes: the rest of WorkflowInfo is never read.
  return kept as unknown as WorkflowInfo;
}

/**
 * Wraps Temporal's workflow span exporter (`makeWorkflowExporter`) so the spans a workflow exports carry only the
 * `WorkflowInfo` fields of {@link WORKFLOW_SPAN_INFO_FIELDS}; the spans' own attributes are untouched.
 */
export function leanWorkflowExporter(exporter: WorkflowExporter): WorkflowExporter {
  const { fn } = exporter.export;
  return { export: { ...exporter.export, fn: (info, spans) => fn(leanWorkflowInfo(info), spans) } };
}
