import { functionLengths } from '../support/function-lengths';

/** The longest a function of the workflow code may be: the run loop reads as a story of short named steps. */
const MAX_LINES = 80;

describe('workflow code', () => {
  test(`has no function, method or arrow function longer than ${MAX_LINES} lines`, () => {
    const tooLong = functionLengths('src/workflows').filter((fn) => fn.lines > MAX_LINES);

    expect(tooLong).toEqual([]);
  });

  test('is measured whole: functions, methods and arrow functions alike', () => {
    const names = new Set(functionLengths('src/workflows').map((fn) => fn.name));

    // A function declaration, a class method, an arrow function held in a constant.
    expect(['agentRun', 'takeFailures', 'runOne'].filter((name) => !names.has(name))).toEqual([]);
  });
});
