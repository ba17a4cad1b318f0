/**
 * How the command line shows runs: a steps table, live step lines and a progress line.
 */
import type { AgentRunState, StepRecord } from '../workflows/agent-run-types';

/** Column widths of the steps table and previews. */
const VIEW = { arguments: 48, observation: 64, goal: 60 } as const;

/** A one-line JSON preview of a value, cut to `max` characters. */
export function preview(value: unknown, max: number): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  text = text.replace(/\s+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** What a step's observation says, in one line. */
export function observationText(step: StepRecord): string {
  const observation = step.observation;
  if (!observation) return step.compensationError ? `undo failed: ${step.compensationError}` : '';
  if (observation.status === 'ok') return `ok: ${preview(observation.output, VIEW.observation)}`;
  return preview(`${observation.code}: ${observation.message}`, VIEW.observation);
}

/** A plain-text table with a header row, columns padded to their widest cell. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** The steps table of `show`: step, tool, arguments, status, attempts, observation. */
export function stepsTable(steps: readonly StepRecord[]): string {
  if (steps.length === 0) return '(no tool calls)';
  return table(
    ['step', 'tool', 'arguments', 'status', 'attempts', 'observation'],
    steps.map((step) => [
      String(step.stepId),
      step.tool,
      preview(step.arguments, VIEW.arguments),
      step.status,
      step.attempts === undefined ? '' : String(step.attempts),
      observationText(step),
    ]),
  );
}

/** The summary lines of a run: goal, status, why, answer. */
export function runSummary(state: AgentRunState): string[] {
  const lines = [`goal:    ${state.goal}`, `status:  ${state.status}`];
  lines.push(`turns:   ${state.turns}, tool calls: ${state.stepCount}`);
  if (state.reason) lines.push(`why:     ${state.reason}`);
  if (state.answer) lines.push(`answer:  ${state.answer}`);
  for (const warning of state.policyWarnings ?? []) lines.push(`warning: ${warning}`);
  return lines;
}

/** Prints each step when it starts and when it ends, then each compensation (newest first), once. */
export class LiveSteps {
  private readonly seen = new Map<number, string>();

  constructor(private readonly print: (line: string) => void) {}

  update(state: AgentRunState | undefined): void {
    for (const step of state?.steps ?? []) {
      const key = `${step.status}|${step.attempts ?? ''}|${progressText(step) ?? ''}`;
      if (this.seen.get(step.stepId) === key) continue;
      const first = !this.seen.has(step.stepId);
      this.seen.set(step.stepId, key);
      if (first) this.print(`  step ${step.stepId}  → ${step.tool} ${preview(step.arguments, 80)}`);
      const line = stepLine(step);
      if (!line) continue;
      const undo =
        step.status === 'compensating' || step.status === 'compensated' || step.status === 'compensation_failed';
      this.print(undo ? `  undo ${step.stepId}  ${line}` : `          ${line}`);
    }
  }
}

function stepLine(step: StepRecord): string | undefined {
  const attempts = step.attempts && step.attempts > 1 ? ` after ${step.attempts} attempts` : '';
  switch (step.status) {
    case 'pending':
      return undefined;
    case 'running': {
      const progress = progressText(step);
      return progress ? `⋯ ${progress}` : undefined;
    }
    case 'awaiting_approval':
      return '⏸ awaiting approval';
    case 'succeeded':
      return `✓ ${observationText(step)}${attempts}`;
    case 'failed':
      return `✗ ${observationText(step)}${attempts}`;
    case 'compensating':
      return `↩ undoing with ${step.undo ?? 'its undo tool'}...`;
    case 'compensated':
      return `↩ undone by ${step.undo ?? 'its undo tool'}`;
    case 'compensation_failed':
      return `✗ undo failed: ${step.compensationError ?? 'unknown error'}`;
  }
}

/** A running call's latest progress, as `40% unit 4 of 10`. */
export function progressText(step: StepRecord): string | undefined {
  if (step.status !== 'running' || !step.progress) return undefined;
  const { percent, message } = step.progress;
  return `${percent}%${message ? ` ${preview(message, VIEW.observation)}` : ''}`;
}

/** The progress line under the live steps. */
export function progressLine(state: AgentRunState | undefined, startedAt: number, now: number): string {
  const seconds = ((now - startedAt) / 1000).toFixed(1);
  if (!state) return `… waiting for a worker to pick up the run (${seconds} s)`;
  const running = state.steps.filter((s) => s.status === 'running').length;
  return `… ${state.status} · turn ${state.turns} · ${state.stepCount} tool calls${running ? ` (${running} running)` : ''} · ${seconds} s`;
}
