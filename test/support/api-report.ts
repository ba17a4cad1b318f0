/**
 * The API report: what each public entry of the package exports, one Markdown file per entry in `api/`, every
 * name with its kind and its declaration (read with the TypeScript compiler API, comments left out). The files
 * are checked in, so a change of the public API shows in review; `npm run api:report` writes them and
 * test/unit/api-report.test.ts fails when they differ from what the sources export.
 *
 * Also the entry files' own lists ({@link listedNames}): every public name is listed once, in one entry file.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** The repository root. */
const REPO = join(__dirname, '..', '..');

/** The public entries: the import path, its source, and the report file it gets. */
export const PUBLIC_ENTRIES = [
  { entry: 'durable-tools', source: 'src/index.ts', report: 'api/durable-tools.api.md' },
  { entry: 'durable-tools/client', source: 'src/entries/client.ts', report: 'api/client.api.md' },
  { entry: 'durable-tools/worker', source: 'src/worker.ts', report: 'api/worker.api.md' },
  { entry: 'durable-tools/testing', source: 'src/entries/testing.ts', report: 'api/testing.api.md' },
  { entry: 'durable-tools/workflow', source: 'src/entries/workflow.ts', report: 'api/workflow.api.md' },
] as const;

/**
 * The files that list public names: the entries and the shared lists they re-export. Not the workflow entry
 * (src/entries/workflow.ts): its audience is code in Temporal's workflow sandbox, which cannot import the others,
 * so it repeats the few workflow-safe names they list too (the error codes, the run's types).
 */
export const ENTRY_LIST_FILES = [
  'src/index.ts',
  'src/worker.ts',
  'src/entries/client.ts',
  'src/entries/common.ts',
  'src/entries/error-family.ts',
  'src/entries/tools.ts',
  'src/entries/testing.ts',
] as const;

/** One exported name of an entry. */
export interface ExportedName {
  name: string;
  /** `class`, `function`, `const`, `interface`, `type`, `enum` or `namespace`. */
  kind: string;
  /** The declaration, without comments or bodies. */
  declaration: string;
  /** Where it is declared, relative to the repository. */
  file: string;
  /** The names a namespace export (`export * as errors from`) holds; none for other kinds. */
  members?: ExportedName[];
}

/** The exports of every public entry, from one program over the entries' sources. */
export function publicApi(): Record<string, ExportedName[]> {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    strict: true,
    esModuleInterop: true,
    skipLibCheck: true,
    resolveJsonModule: true,
    noEmit: true,
    types: ['node'],
  };
  const program = ts.createProgram(
    PUBLIC_ENTRIES.map(({ source }) => join(REPO, source)),
    options,
  );
  const checker = program.getTypeChecker();
  const api: Record<string, ExportedName[]> = {};
  for (const { entry, source } of PUBLIC_ENTRIES) {
    const file = program.getSourceFile(join(REPO, source));
    const module = file && checker.getSymbolAtLocation(file);
    if (!module) throw new Error(`${source} is not a module`);
    api[entry] = checker
      .getExportsOfModule(module)
      .map((symbol) => describe(checker, symbol))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  return api;
}

/** The report of one entry, as checked in. */
export function renderReport(entry: string, names: readonly ExportedName[]): string {
  const lines = [
    `# API report: \`${entry}\``,
    '',
    `Written by \`npm run api:report\` (test/support/api-report.ts); test/unit/api-report.test.ts fails when it`,
    'differs from what the sources export. Do not edit by hand.',
    '',
    `${names.length} exported names.${namespaceCount(names)}`,
    '',
  ];
  for (const name of names) {
    lines.push(`## ${name.name}`, '', `${name.kind}, from \`${name.file}\``, '', '```ts', name.declaration, '```', '');
  }
  return lines.join('\n');
}

/** How many names the entry's namespaces hold (they are listed under the namespace, not counted above). */
function namespaceCount(names: readonly ExportedName[]): string {
  const namespaces = names.filter((name) => name.members);
  if (namespaces.length === 0) return '';
  const held = namespaces.map((name) => `${name.members?.length ?? 0} in \`${name.name}\``).join(', ');
  return ` Namespaces hold more: ${held}.`;
}

/** Every report file and the text it should hold. */
export function apiReports(): Array<{ path: string; text: string }> {
  const api = publicApi();
  return PUBLIC_ENTRIES.map(({ entry, report }) => ({ path: report, text: renderReport(entry, api[entry] ?? []) }));
}

/** The names an entry file lists itself (`export { a, type B } from`, `export type { C } from`), not its `export *`. */
export function listedNames(path: string): string[] {
  const file = ts.createSourceFile(path, readFileSync(join(REPO, path), 'utf8'), ts.ScriptTarget.ES2022);
  return file.statements.flatMap((statement) => {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      return statement.exportClause.elements.map((element) => element.name.text);
    }
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamespaceExport(statement.exportClause))
      return [statement.exportClause.name.text];
    const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) : undefined;
    if (!modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)) return [];
    if (ts.isVariableStatement(statement))
      return statement.declarationList.declarations.map((declaration) => declaration.name.getText(file));
    const named = statement as ts.DeclarationStatement;
    return named.name && ts.isIdentifier(named.name) ? [named.name.text] : [];
  });
}

function describe(checker: ts.TypeChecker, exported: ts.Symbol): ExportedName {
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const declarations = symbol.declarations ?? [];
  const first = declarations[0];
  if (!first) throw new Error(`${exported.name} has no declaration`);
  if (ts.isSourceFile(first)) return namespaceOf(checker, exported.name, symbol, first);
  return {
    name: exported.name,
    kind: kindOf(first),
    declaration: declarations.map((declaration) => declarationText(checker, declaration)).join('\n'),
    file: relative(REPO, first.getSourceFile().fileName),
  };
}

/** A namespace export (`export * as name from './module'`): each name of the module, declared inside it. */
function namespaceOf(checker: ts.TypeChecker, name: string, module: ts.Symbol, file: ts.SourceFile): ExportedName {
  const members = checker
    .getExportsOfModule(module)
    .map((symbol) => describe(checker, symbol))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const body = members.map((member) => member.declaration.replace(/^/gm, '  ')).join('\n');
  return {
    name,
    kind: 'namespace',
    declaration: `namespace ${name} {\n${body}\n}`,
    file: relative(REPO, file.fileName),
    members,
  };
}

function kindOf(node: ts.Declaration): string {
  if (ts.isClassDeclaration(node)) return 'class';
  if (ts.isFunctionDeclaration(node)) return 'function';
  if (ts.isInterfaceDeclaration(node)) return 'interface';
  if (ts.isTypeAliasDeclaration(node)) return 'type';
  if (ts.isEnumDeclaration(node)) return 'enum';
  if (ts.isModuleDeclaration(node)) return 'namespace';
  if (ts.isVariableDeclaration(node)) return ts.getCombinedNodeFlags(node) & ts.NodeFlags.Const ? 'const' : 'let';
  return ts.SyntaxKind[node.kind];
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

function print(node: ts.Node): string {
  return printer.printNode(ts.EmitHint.Unspecified, node, node.getSourceFile());
}

const FULL_TYPE = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType;

function declarationText(checker: ts.TypeChecker, node: ts.Declaration): string {
  if (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || ts.isEnumDeclaration(node)) {
    return print(withoutExport(node));
  }
  if (ts.isFunctionDeclaration(node)) return `function ${node.name?.text ?? 'default'}${signatureText(checker, node)}`;
  if (ts.isVariableDeclaration(node)) return `const ${node.name.getText()}: ${annotated(checker, node)}`;
  if (ts.isClassDeclaration(node)) return classText(checker, node);
  return print(node);
}

/** Type parameters, parameters and return type as written (the checker's when not written), without body. */
function signatureText(checker: ts.TypeChecker, node: ts.SignatureDeclaration): string {
  const typeParameters = node.typeParameters ? `<${node.typeParameters.map(print).join(', ')}>` : '';
  const parameters = node.parameters.map((parameter) => {
    const rest = parameter.dotDotDotToken ? '...' : '';
    const optional = parameter.questionToken || parameter.initializer ? '?' : '';
    return `${rest}${parameter.name.getText()}${optional}: ${annotated(checker, parameter)}`;
  });
  if (ts.isConstructorDeclaration(node)) return `(${parameters.join(', ')})`;
  let returns: string;
  if (node.type) returns = print(node.type);
  else {
    const signature = checker.getSignatureFromDeclaration(node);
    returns = signature ? checker.typeToString(signature.getReturnType(), node, FULL_TYPE) : 'void';
  }
  return `${typeParameters}(${parameters.join(', ')}): ${returns}`;
}

/** The type of a declaration as written, or as the checker infers it when it is not written. */
function annotated(
  checker: ts.TypeChecker,
  node: ts.ParameterDeclaration | ts.VariableDeclaration | ts.PropertyDeclaration | ts.GetAccessorDeclaration,
): string {
  if (node.type) return print(node.type);
  return checker.typeToString(checker.getTypeAtLocation(node), node, FULL_TYPE);
}

/** A class as its header and its public members' signatures, without bodies. */
function classText(checker: ts.TypeChecker, node: ts.ClassDeclaration): string {
  const heritage = (node.heritageClauses ?? []).map((clause) => ` ${print(clause).trim()}`).join('');
  const parameters = node.typeParameters ? `<${node.typeParameters.map(print).join(', ')}>` : '';
  const members = node.members.flatMap((member) => {
    const modifiers = ts.canHaveModifiers(member) ? (ts.getModifiers(member) ?? []) : [];
    if (modifiers.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword))
      return [];
    if (member.name && ts.isPrivateIdentifier(member.name)) return [];
    const flags = modifiers
      .filter((m) => m.kind === ts.SyntaxKind.StaticKeyword || m.kind === ts.SyntaxKind.ReadonlyKeyword)
      .map((m) => `${ts.tokenToString(m.kind)} `)
      .join('');
    if (ts.isConstructorDeclaration(member)) {
      const fields = member.parameters.filter((p) =>
        (ts.getModifiers(p) ?? []).some(
          (m) => m.kind === ts.SyntaxKind.PublicKeyword || m.kind === ts.SyntaxKind.ReadonlyKeyword,
        ),
      );
      return [
        `constructor${signatureText(checker, member)};`,
        ...fields.map((p) => `readonly ${p.name.getText()}: ${annotated(checker, p)};`),
      ];
    }
    const name = member.name?.getText() ?? '';
    if (ts.isMethodDeclaration(member)) return [`${flags}${name}${signatureText(checker, member)};`];
    if (ts.isPropertyDeclaration(member)) return [`${flags}${name}: ${annotated(checker, member)};`];
    if (ts.isGetAccessorDeclaration(member)) return [`${flags}get ${name}(): ${annotated(checker, member)};`];
    if (ts.isSetAccessorDeclaration(member)) return [`${flags}set ${name}(value);`];
    return [];
  });
  const body = members.map((member) => `  ${member}`).join('\n');
  return `class ${node.name?.text ?? 'default'}${parameters}${heritage} {\n${body}\n}`;
}

/** The declaration without its `export` keyword (the report lists exports, each is one). */
function withoutExport<T extends ts.InterfaceDeclaration | ts.TypeAliasDeclaration | ts.EnumDeclaration>(node: T): T {
  const modifiers = (ts.getModifiers(node) ?? []).filter((m) => m.kind !== ts.SyntaxKind.ExportKeyword);
  const factory = ts.factory;
  if (ts.isInterfaceDeclaration(node))
    return factory.updateInterfaceDeclaration(
      node,
      modifiers,
      node.name,
      node.typeParameters,
      node.heritageClauses,
      node.members,
    ) as T;
  if (ts.isTypeAliasDeclaration(node))
    return factory.updateTypeAliasDeclaration(node, modifiers, node.name, node.typeParameters, node.type) as T;
  return factory.updateEnumDeclaration(node as ts.EnumDeclaration, modifiers, node.name, node.members) as T;
}
