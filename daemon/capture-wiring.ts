/**
 * The capture policy at work: hears every finished call and the open DEL/ADD
 * loops, asks the pure policy (collector/capture/capture-policy.ts) what the
 * tracer should run, and switches it. Switches are one at a time; a failed
 * one is retried, and the tracer stays in the mode it had meanwhile.
 */

import type { Logger } from 'pino';
import {
  type CallListener,
  type CaptureControl,
  type CaptureDecision,
  type CaptureListener,
  type CapturePolicyOptions,
  type CapturePolicyState,
  type CaptureScope,
  type CaptureStatus,
  callTrigger,
  decide,
  expire,
  initialCaptureState,
  operatorRequest,
  triggered,
} from '../collector/index.js';
import type { CaptureMode } from '../bpf/index.js';
import { createTopic, isoFromMs } from '../lib/index.js';

/** Often enough that a window ends on time, and a loop finding is seen within seconds. */
const TICK_MS = 1_000;
/** After a failed switch (bpftrace would not start), wait before trying again. */
const RETRY_MS = 30_000;

export interface CaptureWiringDeps {
  readonly policy: CapturePolicyOptions;
  /** The tracer's current mode, and switching it (resolves once the new tracer records). */
  readonly tracerMode: () => CaptureMode;
  readonly setTracerMode: (mode: CaptureMode) => Promise<void>;
  /** Open DEL/ADD loops now: each keeps auto's payloads on. */
  readonly openLoops: () => number;
  readonly log: Logger;
  readonly now?: () => number;
}

export interface CaptureWiring extends CaptureControl {
  /** Feed it the collector's events. */
  readonly callListener: CallListener;
  /** The mode the tracer starts in. */
  initialMode(): CaptureMode;
  /** Whose calls keep their payloads now (null: every call's): read for every published batch, so it formats nothing. */
  scope(): CaptureScope | null;
  start(): void;
  stop(): void;
}

export function createCaptureWiring(deps: CaptureWiringDeps): CaptureWiring {
  const now = deps.now ?? Date.now;
  const log = deps.log;
  const listeners = createTopic<CaptureListener>((err) => log.error({ err }, 'a capture status subscriber failed'));
  let state: CapturePolicyState = initialCaptureState;
  let switching: Promise<void> | null = null;
  /** Set before the switch's first await, so what it announces says so. */
  let inFlight = false;
  let again = false;
  let lastError: string | null = null;
  let retryAtMs = 0;
  let timer: NodeJS.Timeout | null = null;
  let lastAnnounced = '';

  const decision = (): CaptureDecision => decide(state, now(), deps.policy);
  const status = (): CaptureStatus => {
    const d = decision();
    return {
      setting: d.setting,
      configured: deps.policy.configured,
      mode: d.mode,
      reason: d.reason,
      until: d.untilMs === null ? null : isoFromMs(d.untilMs),
      scope: d.scope,
      switching: inFlight,
      lastError,
    };
  };

  /** Tells subscribers when what people see changed (not on every extension of a window). */
  const announce = () => {
    const s = status();
    const key = JSON.stringify({ ...s, until: s.until === null ? null : 'set', reason: s.mode === 'full' && s.setting === 'auto' ? 'auto' : s.reason });
    if (key === lastAnnounced) return;
    lastAnnounced = key;
    listeners.publish((l) => l.onCaptureChanged(s));
  };

  /** Brings the tracer to the decided mode, one switch at a time. */
  const apply = (): Promise<void> => {
    if (switching) {
      again = true;
      return switching;
    }
    const d = decision();
    if (d.mode === deps.tracerMode() || now() < retryAtMs) {
      announce();
      return Promise.resolve();
    }
    inFlight = true;
    switching = (async () => {
      log.info({ mode: d.mode, reason: d.reason }, 'switching the capture mode');
      announce();
      try {
        await deps.setTracerMode(d.mode);
        lastError = null;
        retryAtMs = 0;
      } catch (err) {
        lastError = err instanceof Error ? err.message : String(err);
        retryAtMs = now() + RETRY_MS;
        log.error({ mode: d.mode, err: lastError }, 'the capture mode could not be switched; retrying in 30 s');
      }
    })().finally(() => {
      switching = null;
      inFlight = false;
      announce();
      if (again) {
        again = false;
        void apply();
      }
    });
    return switching;
  };

  const tick = () => {
    state = expire(state, now());
    const loops = deps.openLoops();
    if (loops > 0 && decision().setting === 'auto') {
      state = triggered(state, `${loops} DEL/ADD loop${loops === 1 ? ' is' : 's are'} open`, now(), deps.policy);
    }
    void apply();
  };

  return {
    callListener: {
      onEvents(events) {
        let trigger: string | null = null;
        for (const e of events) {
          if (e.type !== 'call.finished') continue;
          const c = e.call;
          trigger =
            callTrigger(
              {
                command: c.command,
                plugin: c.plugin,
                pod: c.pod,
                status: c.status,
                exitCode: c.outcome?.exitCode ?? null,
                signal: c.outcome?.signal ?? null,
                durationUs: c.durationUs,
                isVersionProbe: c.isVersionProbe,
              },
              deps.policy.slowMs,
            ) ?? trigger;
        }
        if (trigger === null || decision().setting !== 'auto') return;
        const wasFull = decision().mode === 'full';
        state = triggered(state, trigger, now(), deps.policy);
        if (!wasFull) log.info({ reason: trigger }, 'auto capture: payloads on');
        void apply();
      },
    },
    initialMode: () => decision().mode,
    scope: () => decision().scope,
    status,
    async request(req) {
      state = operatorRequest(state, req, now(), deps.policy);
      retryAtMs = 0;
      log.info({ setting: req.setting, forMs: req.forMs, scope: req.scope }, 'capture setting changed by an operator');
      await apply();
      // A switch already under way when the request came runs again for it.
      while (switching) await switching;
      if (lastError !== null && decision().mode !== deps.tracerMode()) throw new Error(lastError);
      return status();
    },
    subscribe: (listener) => listeners.subscribe(listener),
    start() {
      timer ??= setInterval(tick, TICK_MS);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
