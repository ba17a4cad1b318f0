/**
 * How `durable-tools diff` shows two runs: a header line per run, their steps one line per run under each step
 * id (the first divergence marked `>`), and the summary line. Arguments are shortened previews of their
 * recorded form; tokens and cost are those of the model turn that proposed the call, on its first call.
 */
import type { RunDiff, RunDiffHeader, RunDiffRow, RunDiffStep, StepDifference } from '../client/run-diff';
import { plural, preview, table, usageText } from './run-view';

/** Width of the arguments preview in the diff table. */
const DIFF_ARGUMENTS_WIDTH = 40;

/** How the summary names the first divergence's reason. */
const REASON_TEXT: Record<StepDifference, string> = {
  tool: 'tool differs',
  arguments: 'arguments differ',
  outcome: 'outcome differs',
  'only-in-a': 'only in run-a',
  'only-in-b': 'only in run-b',
};

/** `first divergence: step 2 (arguments differ)`, or `no divergence`. */
export function divergenceLine(diff: RunDiff): string {
  if (diff.firstDivergence === null || diff.divergenceReason === null) return 'no divergence';
  return `first divergence: step ${diff.firstDivergence} (${REASON_TEXT[diff.divergenceReason]})`;
}

/** `run-a  <id>  completed · 3 tool calls · 3 model turns · tokens 300 in, 90 out, cost 0.0021`. */
export function runHeaderLine(label: string, run: RunDiffHeader): string {
  const parts = [run.status, plural(run.steps, 'tool call')];
  if (run.turns !== undefined) parts.push(plural(run.turns, 'model turn'));
  if (run.usage) parts.push(`tokens ${usageText(run.usage, run.turns ?? 0)}`);
  if (run.fromHistory) parts.push('read from the history: no worker answered');
  return `${label}  ${run.workflowId}  ${parts.join(' · ')}`;
}

/** The whole diff as `durable-tools diff` prints it. */
export function diffText(diff: RunDiff): string {
  const lines = [runHeaderLine('run-a', diff.a), runHeaderLine('run-b', diff.b), ''];
  if (diff.comparedFrom > 1) {
    lines.push(`(steps before ${diff.comparedFrom} are not in both states: they are in the runs' histories)`, '');
  }
  lines.push(diff.rows.length === 0 ? '(no tool calls)' : stepsDiffTable(diff), '', divergenceLine(diff));
  return lines.join('\n');
}

/** The steps of both runs, one line per run under each step id, the first divergence marked `>`. */
function stepsDiffTable(diff: RunDiff): string {
  const seenTurns = { a: new Set<number>(), b: new Set<number>() };
  const rows = diff.rows.flatMap((row) => {
    const mark = row.stepId === diff.firstDivergence ? '>' : '';
    return [
      [mark, String(row.stepId), 'a', ...stepCells(row, 'a', seenTurns.a)],
      [mark, '', 'b', ...stepCells(row, 'b', seenTurns.b)],
    ];
  });
  return table([' ', 'step', 'run', 'tool', 'arguments', 'status', 'outcome', 'turn', 'tokens', 'cost'], rows);
}

/** One run's cells of a step; tokens and cost only on the first call of a turn (they are the turn's). */
function stepCells(row: RunDiffRow, side: 'a' | 'b', seenTurns: Set<number>): string[] {
  const step: RunDiffStep | null = row[side];
  if (!step) return [`(no step ${row.stepId})`, '', '', '', '', '', ''];
  const usage = seenTurns.has(step.turn) ? undefined : step.turnUsage;
  seenTurns.add(step.turn);
  return [
    step.tool,
    preview(step.arguments, DIFF_ARGUMENTS_WIDTH),
    step.status,
    step.outcome,
    step.turn > 0 ? String(step.turn) : '',
    usage ? `${usage.inputTokens} in, ${usage.outputTokens} out` : '',
    usage?.cost !== undefined ? String(Number(usage.cost.toPrecision(6))) : '',
  ];
}
