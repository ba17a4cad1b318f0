import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The static import graph of the package's TypeScript sources, as far as it matters at run time: imports and
 * re-exports that are not type-only. Used to check what the workflow bundle shares across runs
 * (src/runtime/shared-workflow-modules.ts).
 */

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
}

/** Whether an import declaration brings in nothing but types. */
function typeOnlyImport(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false; // `import './x'`: evaluated for its effects
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  if (!bindings) return false;
  if (ts.isNamespaceImport(bindings)) return false;
  return bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly);
}

function typeOnlyExport(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return clause !== undefined && ts.isNamedExports(clause) && clause.elements.every((element) => element.isTypeOnly);
}

/** The module specifiers a file needs at run time. */
export function runtimeImports(file: string): string[] {
  const specifiers: string[] = [];
  for (const node of parse(file).statements) {
    if (ts.isImportDeclaration(node) && !typeOnlyImport(node)) {
      specifiers.push((node.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !typeOnlyExport(node)) {
      specifiers.push((node.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return specifiers;
}

/** A relative specifier resolved to a source file, or undefined for a package or a built-in. */
export function resolveSource(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  return [`${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(candidate));
}

/** Everything a module reaches at run time: the source files, and the packages or built-ins it imports. */
export function runtimeClosure(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    for (const specifier of runtimeImports(file)) {
      const source = resolveSource(file, specifier);
      if (source) visit(source);
      else packages.add(specifier);
    }
  };
  visit(resolve(entry));
  return { files, packages };
}

/**
 * Top-level statements of a module that could hold state between two runs sharing it: `let`/`var`, a
 * constant made with `new` (a Map, a Set, a RegExp with its `lastIndex`...), a constant object or array that
 * is not exported (exported ones are frozen by Temporal's preload; a private one is reachable only from inside),
 * and any statement run for its effect. Returns each as its first line.
 */
export function moduleStateOf(file: string): string[] {
  const source = parse(file);
  const found: string[] = [];
  const line = (node: ts.Node): string => node.getText(source).split('\n')[0]!;
  for (const node of source.statements) {
    if (ts.isExpressionStatement(node)) found.push(line(node));
    if (!ts.isVariableStatement(node)) continue;
    const exported = node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) === true;
    if ((node.declarationList.flags & ts.NodeFlags.Const) === 0) {
      found.push(line(node));
      continue;
    }
    for (const declaration of node.declarationList.declarations) {
      const init = declaration.initializer && skipAssertions(declaration.initializer);
      if (!init) continue;
      if (ts.isNewExpression(init) || (ts.isRegularExpressionLiteral(init) && /\/[a-z]*[gy][a-z]*$/.test(init.text))) {
        found.push(line(declaration));
      } else if (!exported && (ts.isObjectLiteralExpression(init) || ts.isArrayLiteralExpression(init))) {
        found.push(line(declaration));
      }
    }
  }
  return found;
}

function skipAssertions(node: ts.Expression): ts.Expression {
  let current = node;
  while (ts.isAsExpression(current) || ts.isSatisfiesExpression(current) || ts.isParenthesizedExpression(current)) {
    current = current.expression;
  }
  return current;
}
