import type { BundleOptions } from '@temporalio/worker';
import { createRequire } from 'node:module';

/**
 * The built-in globals the workflow bundle reads through a binding of its own script. Temporal's workflow sandbox
 * is a vm context, where every read of a global goes through the context's property interceptor: ~0.1 µs each,
 * in a loop ~6× the cost of a read of a variable (docs/benchmarks.md, "Globals in the sandbox"). A `const` at the
 * top of the bundle's script is such a variable for all of the bundle's code. Listed: only objects that are the
 * same for every run and that Temporal's sandbox does not replace (`Date`, the timers and `Promise` are left
 * out; `Math.random` is a property, read at each call as before).
 */
export const SANDBOX_GLOBALS = [
  'Object',
  'Array',
  'JSON',
  'Math',
  'Number',
  'String',
  'Boolean',
  'Symbol',
  'Map',
  'Set',
  'WeakMap',
  'WeakSet',
  'Reflect',
  'Error',
  'TypeError',
  'Uint8Array',
] as const;

/** The first line of the bundle: a script-level `const` of each of {@link SANDBOX_GLOBALS}, the same value. */
export function sandboxGlobalsBanner(): string {
  return `const ${SANDBOX_GLOBALS.map((name) => `${name} = globalThis.${name}`).join(', ')};`;
}

type WebpackConfig = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

interface BannerPluginClass {
  new (options: { banner: string; raw: boolean; entryOnly: boolean }): unknown;
}

/**
 * A `webpackConfigHook` that puts {@link sandboxGlobalsBanner} at the top of the workflow bundle (webpack's
 * `BannerPlugin`, of the webpack Temporal's bundler runs). What a workflow does does not change: the same
 * objects, read once per worker's V8 context instead of at every use.
 */
export function withSandboxGlobals(config: WebpackConfig): WebpackConfig {
  const fromTemporalWorker = createRequire(require.resolve('@temporalio/worker'));
  const { BannerPlugin } = fromTemporalWorker('webpack') as { BannerPlugin: BannerPluginClass };
  const banner = new BannerPlugin({ banner: sandboxGlobalsBanner(), raw: true, entryOnly: true });
  return { ...config, plugins: [...(config.plugins ?? []), banner as never] };
}
