/**
 * The length of every function, method, accessor, constructor and arrow function of a source folder, read with
 * the TypeScript compiler's parser: what the function-length test checks. Run it directly to list the longest:
 * `npx tsx test/support/function-lengths.ts src/workflows`.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import ts from 'typescript';
import { typeScriptFiles } from './source-graph';

/** One function of a source file and its length in lines, from its first line to its last. */
export interface FunctionLength {
  /** Path relative to the working directory, with the function's first line: `src/workflows/saga.ts:12`. */
  at: string;
  /** The function's name, or `(anonymous)`, `(arrow)`. */
  name: string;
  lines: number;
}

function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  if (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent)) {
    return node.parent.name.getText(source);
  }
  return ts.isArrowFunction(node) ? '(arrow)' : '(anonymous)';
}

/** Every function-like declaration with a body in one file. */
export function fileFunctionLengths(path: string): FunctionLength[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: FunctionLength[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const declaration = node as ts.FunctionLikeDeclaration;
      const first = source.getLineAndCharacterOfPosition(declaration.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(declaration.getEnd()).line;
      found.push({
        at: `${relative(process.cwd(), path)}:${first + 1}`,
        name: nameOf(declaration, source),
        lines: last - first + 1,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every function-like declaration under a folder, longest first. */
export function functionLengths(dir: string): FunctionLength[] {
  return typeScriptFiles(dir)
    .flatMap(fileFunctionLengths)
    .sort((a, b) => b.lines - a.lines);
}

if (require.main === module) {
  for (const { at, name, lines } of functionLengths(process.argv[2] ?? 'src/workflows').slice(0, 20)) {
    process.stdout.write(`${String(lines).padStart(4)}  ${name}  ${at}\n`);
  }
}
