/**
 * The circuit breaker of a model provider and model, shared by every run of one worker (docs/models.md,
 * "Provider outages"): after a few outage failures in a row it opens, and from then on one call at a time probes
 * the provider, no sooner than a jittered, capped backoff after the last failure; every other call is refused at
 * once without reaching the provider. The first answer closes it. Kept behind {@link ProviderBreaker} so that a
 * store-backed breaker (one probe across workers) can take its place.
 */
import { exponentialCeiling } from '../failures/backoff';

/** What {@link ProviderBreaker.admit} decides for one call. */
export type BreakerAdmission =
  | { admitted: true; probe: false }
  | ({ admitted: true; probe: true } & BreakerOutage)
  | ({
      admitted: false;
      /** When the next probe may go, from now. */
      retryAfterMs: number;
    } & BreakerOutage);

/** The outage an open breaker has seen. */
export interface BreakerOutage {
  /** Epoch ms of the first failure of the run of failures. */
  since: number;
  /** The last failure's type and message. */
  lastCode: string;
  lastError: string;
}

/** A breaker per key (`provider/model`). */
export interface ProviderBreaker {
  /** Whether a call may go to the provider now (and whether it is the probe). */
  admit(key: string, nowMs: number): BreakerAdmission;
  /** The provider answered (or answered a permanent error: it is reachable): the breaker closes. */
  succeeded(key: string): void;
  /** The call failed with an outage; `retryAfterMs` is the provider's own delay, when it gave one. */
  failed(key: string, nowMs: number, failure: { code: string; message: string; retryAfterMs?: number }): void;
  /** The call ended without telling anything of the provider (cancelled, timed out): a probe slot is free again. */
  released(key: string): void;
  /** The pause between probes of `key` now (the lease of a probe slot shared with other workers). */
  probeIntervalMs(key: string): number;
}

/** Settings of {@link createProviderBreaker}. */
export interface ProviderBreakerOptions {
  /** Outage failures in a row that open the breaker (default 3). */
  threshold?: number;
  /** First pause between probes (default 1 s), doubled per failed probe up to `maxProbeIntervalMs`. */
  probeIntervalMs?: number;
  /** Longest pause between probes (default 30 s). */
  maxProbeIntervalMs?: number;
  /** Uniform random source in [0, 1) for the jitter (default `Math.random`). */
  random?: () => number;
}

interface BreakerState {
  failures: number;
  since: number;
  probing: boolean;
  nextProbeAt: number;
  lastCode: string;
  lastError: string;
  /** The last pause between probes. */
  pauseMs: number;
}

/** The breaker of one worker process, in memory. */
export function createProviderBreaker(options: ProviderBreakerOptions = {}): ProviderBreaker {
  const threshold = options.threshold ?? 3;
  const interval = options.probeIntervalMs ?? 1_000;
  const maxInterval = options.maxProbeIntervalMs ?? 30_000;
  const random = options.random ?? Math.random;
  const states = new Map<string, BreakerState>();
  return {
    admit(key, nowMs) {
      const state = states.get(key);
      if (!state || state.failures < threshold) return { admitted: true, probe: false };
      const outage = { since: state.since, lastCode: state.lastCode, lastError: state.lastError };
      if (!state.probing && nowMs >= state.nextProbeAt) {
        state.probing = true;
        return { admitted: true, probe: true, ...outage };
      }
      return { admitted: false, retryAfterMs: Math.max(interval, state.nextProbeAt - nowMs), ...outage };
    },
    succeeded(key) {
      states.delete(key);
    },
    failed(key, nowMs, failure) {
      const state = states.get(key) ?? {
        failures: 0,
        since: nowMs,
        probing: false,
        nextProbeAt: 0,
        lastCode: '',
        lastError: '',
        pauseMs: interval,
      };
      state.failures += 1;
      state.probing = false;
      state.lastCode = failure.code;
      state.lastError = failure.message;
      const ceiling = exponentialCeiling(Math.max(1, state.failures - threshold + 1), interval, maxInterval);
      const pause = Math.round(ceiling / 2 + (random() * ceiling) / 2);
      state.pauseMs = Math.max(pause, failure.retryAfterMs ?? 0);
      state.nextProbeAt = nowMs + state.pauseMs;
      states.set(key, state);
    },
    released(key) {
      const state = states.get(key);
      if (state) state.probing = false;
    },
    probeIntervalMs(key) {
      return states.get(key)?.pauseMs ?? interval;
    },
  };
}

/** The breaker's key of a run's model settings: the provider and the model id (`openai/gpt-4.1-mini`). */
export function providerBreakerKey(settings: { provider: string; model?: unknown }): string {
  return `${settings.provider}/${typeof settings.model === 'string' ? settings.model : ''}`;
}
