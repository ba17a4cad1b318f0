/**
 * The import graph of src/ at folder level, read with the TypeScript compiler's own pre-processor (static,
 * type-only and dynamic imports alike): what the architecture test checks against the declared layers.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** An import of one src/ file by another, in different folders. */
export interface FolderEdge {
  from: string;
  to: string;
  /** `src/`-relative file paths, e.g. `contract/bound-observation.ts -> stores/claim-check.ts`. */
  files: string[];
}

/**
 * The folder a src/ file belongs to: its first directory, or its first two under `mcp/` and `stores/`
 * (`mcp/client`, `stores/audit`); files at the top of src/ are `(entry)`.
 */
export function folderOf(srcRelativePath: string): string {
  const parts = srcRelativePath.split('/');
  if (parts.length === 1) return '(entry)';
  if ((parts[0] === 'mcp' || parts[0] === 'stores') && parts.length > 2) return `${parts[0]}/${parts[1]}`;
  return parts[0]!;
}

/** Every `.ts` file under a folder, its subfolders included. */
export function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return typeScriptFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

function resolveImport(fromFile: string, specifier: string): string | undefined {
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [base, `${base}.ts`, join(base, 'index.ts'), base.replace(/\.js$/, '.ts')];
  return candidates.find((candidate) => candidate.endsWith('.ts') && existsSync(candidate));
}

/** Every folder-to-folder import edge of the given src/ directory. */
export function folderEdges(srcDir: string): FolderEdge[] {
  const edges = new Map<string, FolderEdge>();
  for (const file of typeScriptFiles(srcDir)) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolveImport(file, fileName);
      if (!target || !target.startsWith(srcDir + sep)) continue;
      const fromPath = relative(srcDir, file).split(sep).join('/');
      const toPath = relative(srcDir, target).split(sep).join('/');
      const from = folderOf(fromPath);
      const to = folderOf(toPath);
      if (from === to) continue;
      const key = `${from} -> ${to}`;
      const edge = edges.get(key) ?? { from, to, files: [] };
      edge.files.push(`${fromPath} -> ${toPath}`);
      edges.set(key, edge);
    }
  }
  return [...edges.values()];
}

/**
 * The import edges between the files of one folder of src/ (subfolders aside), file names as nodes: static,
 * type-only and dynamic imports alike, so a circle held together by type imports only counts as a cycle too.
 */
export function fileEdges(srcDir: string, folder: string): FolderEdge[] {
  const dir = join(srcDir, folder);
  const edges: FolderEdge[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.ts'))) {
    const path = join(dir, file);
    for (const { fileName } of ts.preProcessFile(readFileSync(path, 'utf8'), true, true).importedFiles) {
      const target = fileName.startsWith('.') ? resolveImport(path, fileName) : undefined;
      if (!target || dirname(target) !== dir) continue;
      const to = relative(dir, target);
      edges.push({ from: file, to, files: [`${folder}/${file} -> ${folder}/${to}`] });
    }
  }
  return edges;
}

/**
 * The strongly connected components with more than one node: each is an import cycle (between folders, or
 * between files for {@link fileEdges}).
 */
export function folderCycles(edges: readonly FolderEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of next.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const { from, to } of edges) for (const node of [from, to]) if (!index.has(node)) visit(node);
  return cycles;
}
