/**
 * `Promise.withResolvers` (ES2024, Node ≥ 22) for Node 20: the Restate SDK 1.17 calls it on every invocation
 * (without it each one fails with `TypeError: Promise.withResolvers is not a function`). Imported first by the
 * Restate service process of `npm run bench:peers`; does nothing where it exists.
 */
const withResolvers = function <T>(this: PromiseConstructor) {
  let resolve!: (value: T | PromiseLike<T>) => void;
  let reject!: (reason?: unknown) => void;
  const promise = new this<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

const promiseConstructor = Promise as unknown as { withResolvers?: unknown };
if (typeof promiseConstructor.withResolvers !== 'function') promiseConstructor.withResolvers = withResolvers;

export {};
