/** How `durable-tools run` prints a run's live stream, on a terminal and elsewhere. */
import { StreamView } from '../../src/cli/stream-view';
import type { AgentStreamEvent, AgentStreamEventData } from '../../src/stores/streams/stream-events';

const segment = (turn: number, attempt = 1) => ({ workflowId: 'wf', runId: 'r', turn, attempt });
let offset = 0;
const at = (data: AgentStreamEventData): AgentStreamEvent =>
  ({ ...data, offset: (offset += 1), at: 0 }) as AgentStreamEvent;
const start = (turn: number, attempt = 1) =>
  at({ type: 'segment-start', segment: segment(turn, attempt), restart: attempt > 1 });
const text = (turn: number, delta: string, attempt = 1) =>
  at({ type: 'text-delta', segment: segment(turn, attempt), delta });
const end = (turn: number, outcome: 'completed' | 'failed', attempt = 1) =>
  at({ type: 'segment-end', segment: segment(turn, attempt), outcome });

function view(interactive: boolean) {
  const output: string[] = [];
  const v = new StreamView({ write: (t) => output.push(t), line: (l) => output.push(`${l}\n`) }, interactive, 100);
  return { v, output: () => output.join('') };
}

describe('the live text of a run on a terminal', () => {
  test('appears piece by piece after a prefix, and ends its line when the turn ends', () => {
    const { v, output } = view(true);
    for (const e of [start(0), text(0, 'Hel'), text(0, 'lo.')]) v.show(e);
    expect(output()).toBe('model › Hello.');
    expect(v.open).toBe(true);
    v.show(end(0, 'completed'));
    expect(output()).toBe('model › Hello.\n');
    expect(v.open).toBe(false);
  });

  test('announces a retried turn on a line of its own before its new text', () => {
    const { v, output } = view(true);
    for (const e of [start(0), text(0, 'Half'), start(0, 2), text(0, 'Whole.'), end(0, 'completed', 2)]) v.show(e);
    expect(output()).toBe(
      'model › Half\n(turn 1 is answered again, attempt 2: earlier text of this turn is void)\nmodel › Whole.\n',
    );
  });
});

describe('the text of a run elsewhere (a pipe, a file)', () => {
  test('is printed once per turn, whole, when the turn is released and complete', () => {
    const { v, output } = view(false);
    for (const e of [start(0), text(0, 'Hel'), text(0, 'lo.')]) v.show(e);
    v.printTurn(0);
    expect(output()).toBe('');
    v.show(end(0, 'completed'));
    expect(output()).toBe('model › Hello.\n');
    v.printTurn(0);
    expect(output()).toBe('model › Hello.\n');
  });

  test('never shows the text of a failed attempt', () => {
    const { v, output } = view(false);
    for (const e of [
      start(0),
      text(0, 'Half'),
      end(0, 'failed'),
      start(0, 2),
      text(0, 'Whole.'),
      end(0, 'completed', 2),
    ]) {
      v.show(e);
    }
    v.printTurn(0);
    expect(output()).toBe('(turn 1 is answered again, attempt 2: earlier text of this turn is void)\nmodel › Whole.\n');
  });
});
