/**
 * TypeScript tools modules (`durable-tools dev --tools src/tools.ts`): Node cannot load them by itself, so
 * the loader registers tsx — the one installed in the user's project, never a copy of ours — or says at once
 * what to install.
 */
import Module, { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { DurableToolsError } from '../contract/durable-tools-error';

/** Extensions of the modules that need a TypeScript loader. */
export const TYPESCRIPT_MODULE_EXTENSIONS = ['.ts', '.mts', '.cts'] as const;

/** Why a tools module cannot be loaded; `code` for programs, the message says what to do. */
export class ToolsModuleError extends DurableToolsError<'TYPESCRIPT_LOADER_MISSING'> {
  override readonly name = 'ToolsModuleError';
  constructor(
    message: string,
    /** `TYPESCRIPT_LOADER_MISSING`: a TypeScript module, and no tsx where the project could provide it. */
    code: 'TYPESCRIPT_LOADER_MISSING',
  ) {
    super(message, code);
  }
}

/** How the loader finds things; injectable so tests can take tsx away. */
export interface TypeScriptLoaderDeps {
  /** The path of `request` as `require.resolve` finds it from `fromDir`, or undefined when it is not there. */
  resolveFrom?: (request: string, fromDir: string) => string | undefined;
  /** Whether `require` already loads `.ts` files (tsx, ts-node or jest's transform registered). */
  typeScriptLoaded?: () => boolean;
  /** Registers the tsx require hook of the module at `path` (its `register()`). */
  register?: (path: string) => void;
  /** Whether this Node strips types itself (`process.features.typescript`, Node 22.10+ with it enabled). */
  nodeStripsTypes?: () => boolean;
}

/** What {@link enableTypeScriptFor} did. */
export type TypeScriptLoading = 'not-typescript' | 'already-loaded' | 'registered' | 'node-strips-types';

/**
 * Makes `require` able to load the TypeScript module at `modulePath` (an absolute path): nothing for a `.js`
 * module or when a loader is already registered (`node --import tsx`); otherwise registers tsx's require hook
 * (`tsx/cjs/api`, which compiles `.ts`, `.mts` and `.cts` and their imports), resolved from the module's
 * directory, then from `cwd` — that is, from the user's project. Without tsx there, on a Node that strips
 * types itself it lets Node load the module; otherwise it throws a {@link ToolsModuleError} saying what to
 * install, before anything is started.
 *
 * tsx's ESM hooks (`tsx/esm/api`) are not registered: tools modules are loaded with `require`, and the CommonJS
 * build of that entry cannot be required on Node 20 (it registers a path that does not exist). A tools module
 * with top-level `await` is therefore refused by tsx with its own message; compile it, or start the command
 * with `node --import tsx`.
 */
export function enableTypeScriptFor(
  modulePath: string,
  cwd: string,
  deps: TypeScriptLoaderDeps = {},
): TypeScriptLoading {
  const extension = extname(modulePath).toLowerCase();
  if (!(TYPESCRIPT_MODULE_EXTENSIONS as readonly string[]).includes(extension)) return 'not-typescript';
  const typeScriptLoaded = deps.typeScriptLoaded ?? requireLoadsTypeScript;
  if (typeScriptLoaded()) return 'already-loaded';
  const resolveFrom = deps.resolveFrom ?? resolveFromDirectory;
  const api = resolveFrom('tsx/cjs/api', dirname(modulePath)) ?? resolveFrom('tsx/cjs/api', cwd);
  if (!api && (deps.nodeStripsTypes ?? nodeStripsTypes)()) return 'node-strips-types';
  if (!api) {
    throw new ToolsModuleError(
      `${modulePath} is TypeScript, and durable-tools loads TypeScript with tsx, which your project does not have. ` +
        'Install it there (`npm i -D tsx`), or compile the module to JavaScript and pass the .js file.',
      'TYPESCRIPT_LOADER_MISSING',
    );
  }
  (deps.register ?? registerTsx)(api);
  return 'registered';
}

/** Whether `require` has a handler for `.ts` files (tsx, ts-node and the like add one). */
function requireLoadsTypeScript(): boolean {
  const extensions = (Module as unknown as { _extensions?: Record<string, unknown> })._extensions;
  return extensions !== undefined && Object.hasOwn(extensions, '.ts');
}

function nodeStripsTypes(): boolean {
  const features = process.features as { typescript?: string | false };
  return typeof features.typescript === 'string';
}

function resolveFromDirectory(request: string, fromDir: string): string | undefined {
  try {
    return createRequire(join(fromDir, 'noop.js')).resolve(request);
  } catch {
    return undefined;
  }
}

function registerTsx(path: string): void {
  const api = createRequire(path)(path) as { register?: () => unknown };
  if (typeof api.register !== 'function') {
    throw new Error(`${path} has no register(): tsx 4 or newer is needed to load TypeScript tools modules.`);
  }
  api.register();
}
