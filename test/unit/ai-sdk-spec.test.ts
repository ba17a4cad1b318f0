import { join } from 'node:path';
import ts from 'typescript';

const REPO = join(__dirname, '..', '..');
const FIT = join(REPO, 'test', 'support', 'ai-sdk-spec-fit.ts');

describe("the adapter's own AI SDK spec", () => {
  test('fits both lines: models, call options and results of AI SDK 6 (v3) and AI SDK 7 (v4) type-check', () => {
    const config = ts.getParsedCommandLineOfConfigFile(
      join(REPO, 'tsconfig.json'),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
          throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
        },
      },
    );
    const program = ts.createProgram([FIT], { ...config!.options, noEmit: true });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    expect(problems).toEqual([]);
    // The proof names the real types of both lines, so it cannot pass on an empty program.
    expect(program.getSourceFile(FIT)?.text).toContain("from 'ai-sdk-7-provider'");
  });
});
