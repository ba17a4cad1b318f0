import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tools as tripTools } from '../../examples/trip-tools';
import type { ScriptedTurn } from '../../src/model/scripted-model';
import { parseScriptedTurns, ScriptedTurnsError } from '../../src/model/scripted-turns';

function problemsOf(value: unknown): string[] {
  try {
    parseScriptedTurns(value);
  } catch (error) {
    if (error instanceof ScriptedTurnsError) return error.problems.map((p) => `${p.path}: ${p.message}`);
    throw error;
  }
  throw new Error('expected a ScriptedTurnsError');
}

describe('the scripted turn format', () => {
  test('accepts every field, nested alternatives and arguments as an object or as JSON text', () => {
    const script: ScriptedTurn[] = [
      { text: 'Searching.', toolCalls: [{ name: 'search', arguments: { q: 'x' } }] },
      {
        toolCalls: [{ name: 'book', arguments: '{"id": 1' }],
        ifPreviousFailed: { text: 'Again.', toolCalls: [{ name: 'search' }], ifPreviousFailed: { final: true } },
      },
      { text: 'Done.', final: true },
    ];
    expect(parseScriptedTurns(JSON.parse(JSON.stringify(script)))).toEqual(script);
  });

  test('names a tool call whose name is not a string by its path', () => {
    const script = [{ text: 'a' }, { toolCalls: [] }, { toolCalls: [{ name: 42, arguments: {} }] }];
    expect(problemsOf(script)).toEqual(['turns[2].toolCalls[0].name: expected a string (the name of a tool)']);
  });

  test('refuses an unknown field (a typo would otherwise be ignored), naming the fields a turn has', () => {
    expect(problemsOf([{ toolcalls: [{ name: 'search' }] }])).toEqual([
      'turns[0].toolcalls: unknown field (expected only text, toolCalls, final, ifPreviousFailed)',
    ]);
  });

  test('finds problems inside ifPreviousFailed', () => {
    expect(problemsOf([{ ifPreviousFailed: { final: 'yes' } }])).toEqual([
      'turns[0].ifPreviousFailed.final: expected true or false',
    ]);
  });

  test('refuses a script that is not an array, with the error naming the format', () => {
    expect(() => parseScriptedTurns({ turns: [] })).toThrow(
      /^The script does not have the scripted turn format:\n {2}turns: expected a JSON array of turns$/,
    );
  });

  test('lists at most 10 problems in its message and counts the others', () => {
    const error = (() => {
      try {
        return parseScriptedTurns(Array.from({ length: 12 }, () => 0));
      } catch (caught) {
        return caught as ScriptedTurnsError;
      }
    })() as ScriptedTurnsError;
    expect(error.problems).toHaveLength(12);
    expect(error.message.split('\n').slice(1)).toHaveLength(11);
    expect(error.message).toMatch(/\(and 2 more\)$/);
  });

  test('examples/trip-turns.json has the format and calls only tools of examples/trip-tools.ts', () => {
    const script = parseScriptedTurns(
      JSON.parse(readFileSync(join(__dirname, '..', '..', 'examples', 'trip-turns.json'), 'utf8')),
    );
    const names = new Set(tripTools.map((tool) => tool.contract.name));
    const called = script.flatMap((turn) => [turn, ...(turn.ifPreviousFailed ? [turn.ifPreviousFailed] : [])]);
    const unknown = called.flatMap((turn) => turn.toolCalls ?? []).filter((call) => !names.has(call.name));
    expect(unknown).toEqual([]);
  });
});
