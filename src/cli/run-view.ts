/**
 * How the command line (`run`, `show`) and the demo (`npm start`) show runs: step lines in the order things
 * happened, a steps table, the run's summary and a progress line. Errors are printed whole — code, message and
 * hint, wrapped to the output width, never cut; only previews of arguments and outputs are shortened.
 */
import { waitingText } from '../contract/model-outage';
import type { ToolErrorObservation } from '../contract/activity-protocol';
import type { AgentRunState, RunUsageTotals, StepRecord } from '../contract/agent-run-types';

/** Column widths of the steps table and previews. */
const VIEW = { arguments: 48, observation: 64, goal: 60, stepArguments: 80 } as const;

/** The output width when it is not a terminal (a pipe, a file, a CI log). */
export const DEFAULT_OUTPUT_WIDTH = 100;

/** Narrowest width wrapping is done to (a terminal narrower than this gets lines of this length). */
const MIN_OUTPUT_WIDTH = 40;

/** The width to wrap to: the terminal's columns, else {@link DEFAULT_OUTPUT_WIDTH}. */
export function outputWidth(interactive: boolean, columns: number | undefined = process.stdout.columns): number {
  if (!interactive || !columns || columns <= 0) return DEFAULT_OUTPUT_WIDTH;
  return Math.max(MIN_OUTPUT_WIDTH, columns);
}

/** `1 tool call`, `2 tool calls`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

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

/**
 * Wraps text at spaces so that no line is longer than `width` (the first line starts with `first`, the others
 * with `rest`). Nothing is cut: a word longer than a line stays whole on a line of its own. Newlines in the
 * text start new lines.
 */
export function wrap(text: string, width: number, first = '', rest = first): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const paragraph of text.split('\n')) {
    if (!empty || lines.length > 0) {
      lines.push(line.trimEnd());
      line = rest;
      empty = true;
    }
    for (const word of paragraph.split(/[ \t]+/).filter((w) => w !== '')) {
      if (!empty && line.length + 1 + word.length > width) {
        lines.push(line);
        line = rest;
        empty = true;
      }
      line += empty ? word : ` ${word}`;
      empty = false;
    }
  }
  lines.push(line.trimEnd());
  return lines;
}

/** ` after 3 attempts` when the engine made more than one. */
function attemptsText(attempts: number | undefined): string {
  return attempts && attempts > 1 ? ` after ${attempts} attempts` : '';
}

/** What a step's observation says, in one short line (the steps table's last column). */
export function observationText(step: StepRecord): string {
  const observation = step.observation;
  if (!observation && step.status === 'running' && step.waiting) return `⏳ ${step.waiting.message}`;
  if (!observation) return step.compensationError ? 'undo failed (see below)' : '';
  if (observation.status === 'ok') {
    return `ok${observation.cached ? ' (cached)' : ''}: ${preview(observation.output, VIEW.observation)}`;
  }
  return `${observation.code} (see below)`;
}

/**
 * A failed call's observation, whole: `✗ CODE after N attempts: message` and `Hint: …`, wrapped to `width`,
 * each line starting with `indent` (the first with `first`).
 */
export function errorLines(observation: ToolErrorObservation, width: number, first: string, indent: string): string[] {
  const lines = wrap(
    `✗ ${observation.code}${attemptsText(observation.attempts)}: ${observation.message}`,
    width,
    first,
    `${indent}  `,
  );
  if (observation.hint) lines.push(...wrap(`Hint: ${observation.hint}`, width, `${indent}  `));
  // Field problems the hint does not already spell out.
  for (const issue of (observation.issues ?? []).filter((i) => !observation.hint.includes(i.message))) {
    lines.push(
      ...wrap(`- ${issue.path || '(arguments)'}: ${issue.message}`, width, `${indent}    `, `${indent}      `),
    );
  }
  return lines;
}

/** The end of a forward call: `✓ ok after 2 attempts: {...}` or its whole error. */
function outcomeLines(step: StepRecord, width: number, first: string, indent: string): string[] {
  const observation = step.observation;
  if (!observation) return [`${first}${step.status}`];
  if (observation.status === 'error') return errorLines(observation, width, first, indent);
  const head = `${first}✓ ok${attemptsText(step.attempts)}${observation.replayed ? ' (replayed)' : ''}${observation.cached ? ' (cached)' : ''}: `;
  return [`${head}${preview(observation.output, Math.max(20, width - head.length))}`];
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

/**
 * The steps of `show`: a table (step, tool, arguments, status, attempts, observation), then every error in
 * full — its message, hint and field problems, and failed compensations — wrapped to `width`.
 */
export function stepsTable(steps: readonly StepRecord[], width = DEFAULT_OUTPUT_WIDTH): string {
  if (steps.length === 0) return '(no tool calls)';
  const rows = table(
    ['step', 'tool', 'arguments', 'status', 'attempts', 'observation'],
    steps.map((step) => [
      String(step.stepId),
      step.tool,
      preview(step.arguments, VIEW.arguments),
      step.status + dryRunMark(step) + forkedMark(step),
      step.attempts === undefined ? '' : String(step.attempts),
      observationText(step),
    ]),
  );
  const details: string[] = [];
  for (const step of steps) {
    if (step.observation?.status === 'error') {
      details.push(...errorLines(step.observation, width, `  step ${step.stepId}  `, '          '));
    }
    if (step.compensationError) {
      details.push(
        ...wrap(`✗ undo failed: ${step.compensationError}`, width, `  undo ${step.stepId}  `, '            '),
      );
    }
  }
  return details.length > 0 ? `${rows}\n\n${details.join('\n')}` : rows;
}

/** `1200 in, 300 out, cost 0.0042` — or why there is nothing to count. */
export function usageText(usage: RunUsageTotals | undefined, turns: number): string {
  if (!usage) return 'not recorded';
  const reported = turns - usage.unreportedTurns;
  if (turns > 0 && reported <= 0) return `not reported by the model (${plural(turns, 'turn')})`;
  let text = `${usage.inputTokens} in, ${usage.outputTokens} out`;
  if (usage.cost !== undefined) text += `, cost ${Number(usage.cost.toPrecision(6))}`;
  if (usage.unreportedTurns > 0) text += ` (${plural(usage.unreportedTurns, 'turn')} reported none)`;
  return text;
}

/** The summary lines of a run: goal, status, turns and calls, tokens, why, answer, warnings. */
export function runSummary(state: AgentRunState, width = DEFAULT_OUTPUT_WIDTH): string[] {
  const field = (name: string, text: string) => wrap(text, width, `${`${name}:`.padEnd(9)}`, ' '.repeat(9));
  return [
    ...field('goal', state.goal),
    ...field('status', state.status),
    ...field('turns', `${plural(state.turns, 'model turn')}, ${plural(state.stepCount, 'tool call')}`),
    ...field('tokens', usageText(state.usage, state.turns)),
    ...(state.waitingForModel ? field('model', waitingText(state.waitingForModel)) : []),
    ...(state.reason ? field('why', state.reason) : []),
    ...(state.answer ? field('answer', state.answer) : []),
    ...(state.dryRun ? field('dry run', dryRunSummary(state)) : []),
    ...(state.forkedFrom ? field('forked', forkSummary(state.forkedFrom)) : []),
    ...(state.policyWarnings ?? []).flatMap((warning) => field('warning', warning)),
  ];
}

/** `from run-a at step 4: steps 1–3 are copied from it (nothing ran for them here)`. */
function forkSummary(fork: NonNullable<AgentRunState['forkedFrom']>): string {
  const copied =
    fork.fromStep <= 1
      ? 'no step is copied'
      : `${fork.fromStep === 2 ? 'step 1 is' : `steps 1–${fork.fromStep - 1} are`} copied from it (nothing ran for them here)`;
  return `from ${fork.workflowId} at step ${fork.fromStep}: ${copied}`;
}

/** A step a fork copied from its source, after its status: ` (copied)`. */
function forkedMark(step: StepRecord): string {
  return step.forked ? ' (copied)' : '';
}

/** How a dry run's step was answered, after its status: ` (record of step 3)`, ` (no record)`, ` (ran)`. */
function dryRunMark(step: StepRecord): string {
  if (!step.dryRun) return '';
  if (step.dryRun.answer === 'recorded') return ` (record of step ${step.dryRun.sourceStep})`;
  return step.dryRun.answer === 'refused' ? ' (no record)' : ' (ran)';
}

/** `of agent-run-1: 3 answered from its record, 1 refused, 1 read-only call ran; nothing with effects ran`. */
function dryRunSummary(state: AgentRunState): string {
  const count = (answer: string) => state.steps.filter((step) => step.dryRun?.answer === answer).length;
  return (
    `of ${state.dryRun!.sourceWorkflowId}: ${count('recorded')} answered from its record, ${count('refused')} ` +
    `refused (no record), ${count('ran')} read-only ran; nothing with effects ran`
  );
}

/** What has been printed of one step. */
interface Printed {
  started: boolean;
  detail?: string;
  ended: boolean;
  undo?: 'started' | 'ended';
}

/** One line group to print, with the workflow time it happened at (for the order). */
interface StepEvent {
  at: number | undefined;
  stepId: number;
  lines(width: number, continuing: boolean): string[];
}

const UNDO_STATUSES: ReadonlySet<StepRecord['status']> = new Set([
  'compensating',
  'compensated',
  'compensation_failed',
]);
const OPEN_STATUSES: ReadonlySet<StepRecord['status']> = new Set(['pending', 'awaiting_approval', 'running']);

/**
 * Prints a run's steps as they happen, from successive states: each call when it starts and when it ends (even
 * when both happened between two reads, or the call has been undone since), in the order of the workflow's
 * clock; then the compensations, newest step first, after the failure that caused them. Each line once.
 */
export class LiveSteps {
  private readonly printed = new Map<number, Printed>();
  /** The step the last line was about: its end line then needs no `step N` label. */
  private lastStep: number | undefined;

  /**
   * @param beforeTurn called before the first line about a step proposed by model turn `turn` (from 1), so the
   * text of that turn can be printed before its steps (`durable-tools run`)
   */
  constructor(
    private readonly print: (line: string) => void,
    private readonly width = DEFAULT_OUTPUT_WIDTH,
    private readonly beforeTurn?: (turn: number) => void,
  ) {}

  update(state: AgentRunState | undefined): void {
    const steps = [...(state?.steps ?? [])].sort((a, b) => a.stepId - b.stepId);
    const turnOf = new Map(steps.map((step) => [step.stepId, step.turn]));
    const events: StepEvent[] = [];
    for (const step of steps) events.push(...this.forwardEvents(step));
    // Events without a time keep their place after the one before them.
    let at = -Infinity;
    const timed = events.map((event, index) => {
      at = event.at ?? at;
      return { event, at, index };
    });
    timed.sort((a, b) => a.at - b.at || a.index - b.index);
    for (const { event } of timed) {
      const turn = turnOf.get(event.stepId);
      if (turn !== undefined) this.beforeTurn?.(turn);
      this.emit(event);
    }
    for (const step of [...steps].reverse()) for (const event of this.undoEvents(step)) this.emit(event);
  }

  private emit(event: StepEvent): void {
    for (const line of event.lines(this.width, this.lastStep === event.stepId)) this.print(line);
    this.lastStep = event.stepId;
  }

  private forwardEvents(step: StepRecord): StepEvent[] {
    const printed = this.printed.get(step.stepId) ?? { started: false, ended: false };
    this.printed.set(step.stepId, printed);
    const events: StepEvent[] = [];
    const id = step.stepId;
    const label = `  step ${id}  `;
    const indent = ' '.repeat(label.length);
    if (!printed.started) {
      printed.started = true;
      events.push({
        at: step.startedAt ?? step.endedAt,
        stepId: id,
        lines: () => [`${label}→ ${step.tool} ${preview(step.arguments, VIEW.stepArguments)}`],
      });
    }
    if (OPEN_STATUSES.has(step.status)) {
      const detail = openDetail(step);
      if (detail && detail !== printed.detail) {
        printed.detail = detail;
        events.push({
          at: undefined,
          stepId: id,
          lines: (width, continuing) => wrap(detail, width, continuing ? indent : label, `${indent}  `),
        });
      }
      return events;
    }
    if (!printed.ended) {
      printed.ended = true;
      events.push({
        at: step.endedAt,
        stepId: id,
        lines: (width, continuing) => outcomeLines(step, width, continuing ? indent : label, indent),
      });
    }
    return events;
  }

  private undoEvents(step: StepRecord): StepEvent[] {
    if (!UNDO_STATUSES.has(step.status)) return [];
    const printed = this.printed.get(step.stepId)!;
    const label = `  undo ${step.stepId}  `;
    const undo = step.undo ?? 'its undo tool';
    const events: StepEvent[] = [];
    if (step.status === 'compensating') {
      if (printed.undo === undefined) {
        printed.undo = 'started';
        events.push({ at: undefined, stepId: -step.stepId, lines: () => [`${label}↩ undoing with ${undo}...`] });
      }
    } else if (printed.undo !== 'ended') {
      printed.undo = 'ended';
      events.push({
        at: undefined,
        stepId: -step.stepId,
        lines: (width) =>
          step.status === 'compensated'
            ? [`${label}↩ undone by ${undo}`]
            : wrap(
                `✗ undo failed: ${step.compensationError ?? 'unknown error'}`,
                width,
                label,
                ' '.repeat(label.length + 2),
              ),
      });
    }
    return events;
  }
}

/** A waiting or running call's current state: awaiting approval, or its latest progress. */
function openDetail(step: StepRecord): string | undefined {
  if (step.status === 'awaiting_approval') return '⏸ awaiting approval';
  if (step.status === 'running' && step.waiting) return `⏳ ${step.waiting.message}`;
  const progress = progressText(step);
  return progress ? `⋯ ${progress}` : undefined;
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
  const waiting = state.waitingForModel ? ` · ${waitingText(state.waitingForModel)}` : '';
  return `… ${state.status} · ${plural(state.turns, 'turn')} · ${plural(state.stepCount, 'tool call')}${running ? ` (${running} running)` : ''}${waiting} · ${seconds} s`;
}
