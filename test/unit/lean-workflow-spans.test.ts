import type { SerializableSpan } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import type { WorkflowInfo } from '@temporalio/workflow';
import {
  leanWorkflowExporter,
  leanWorkflowInfo,
  WORKFLOW_SPAN_INFO_FIELDS,
} from '../../src/telemetry/lean-workflow-spans';

/** The fields of the WorkflowInfo below that a lean workflow span keeps. */
const keptFields = {
  workflowId: 'trip-1',
  runId: 'run-2',
  workflowType: 'agentRun',
  taskQueue: 'bookings',
  namespace: 'default',
  attempt: 1,
  firstExecutionRunId: 'run-1',
  continuedFromExecutionRunId: 'run-1',
};

/** What Temporal's workflow span exporter is handed for each span: the whole WorkflowInfo of the run. */
const info = {
  ...keptFields,
  originalExecutionRunId: 'run-1',
  memo: { startedBy: { subject: 'alice' } },
  searchAttributes: { DurableRunStatus: ['running'] },
  parent: { workflowId: 'parent', runId: 'p', namespace: 'default' },
  retryPolicy: { maximumAttempts: 1 },
  historyLength: 42,
  historySize: 9000,
  continueAsNewSuggested: false,
  startTime: new Date(0),
  runStartTime: new Date(0),
  taskTimeoutMs: 10_000,
} as unknown as WorkflowInfo;

test('a workflow span keeps the ids, type, task queue, namespace and attempt of its WorkflowInfo', () => {
  expect(leanWorkflowInfo(info)).toEqual(keptFields);
});

test('a workflow span drops the memo, the search attributes and every other WorkflowInfo field', () => {
  const kept = Object.keys(leanWorkflowInfo(info));
  for (const dropped of ['memo', 'searchAttributes', 'parent', 'retryPolicy', 'historyLength', 'startTime']) {
    expect(kept).not.toContain(dropped);
  }
  expect(kept.every((field) => (WORKFLOW_SPAN_INFO_FIELDS as readonly string[]).includes(field))).toBe(true);
});

test('a field a run does not have (a first generation has no continuedFromExecutionRunId) is left out', () => {
  const { continuedFromExecutionRunId: _none, ...first } = info;
  expect(leanWorkflowInfo(first as WorkflowInfo)).not.toHaveProperty('continuedFromExecutionRunId');
});

test("the lean exporter hands Temporal's exporter the spans as they are, with the lean WorkflowInfo", () => {
  const calls: Array<{ info: WorkflowInfo; spans: SerializableSpan[] }> = [];
  const inner = { export: { fn: (i: WorkflowInfo, spans: SerializableSpan[]) => void calls.push({ info: i, spans }) } };
  const spans = [{ name: 'model_turn' }] as unknown as SerializableSpan[];
  void leanWorkflowExporter(inner).export.fn(info, spans);
  expect(calls).toEqual([{ info: leanWorkflowInfo(info), spans }]);
});
