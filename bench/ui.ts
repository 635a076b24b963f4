/**
 * The web view in headless Chromium (Debian's, driven by playwright-core): how long a busy pod's story
 * (~260 calls) takes to be drawn, and how smooth the live tail stays while 200 calls a second arrive.
 * The daemon's app runs in-process on a real SQLite store (the story's calls are written to it) with
 * the built web view (dist/ui/); the tail's calls are published as the collector would.
 *
 *   npm run build && node dist/bench/ui.js          # about a minute
 *
 * Writes bench/results/ui.json and bench/results/ui.md. Targets: story drawn ≤ 1 s; no tail frame over 100 ms.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { buildApp } from '../api/index.js';
import type { CallListener, CniCall } from '../collector/index.js';
import { findUiDir } from '../daemon/ui-dir.js';
import { createCallStore, openDatabase } from '../store/index.js';
import { distribution, round, type Distribution } from './lib/stats.js';
import { benchCall, busyPod } from './lib/ui-calls.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CHROMIUM = process.env.CNIREC_CHROMIUM ?? '/usr/bin/chromium';
const SANDBOXES = 65; // × 4 calls = 260
const STORY_RUNS = 10;
const TAIL_RATE = 200;
const TAIL_SECONDS = 10;
const IDLE_SECONDS = 3;

interface Results {
  machine: { cpus: number; model: string; memGiB: number; node: string; chromium: string; date: string };
  story: { calls: number; rows: number; runs: number; drawnMs: Distribution; firstLoadMs: number; targetMs: number; met: boolean };
  idle: TailResult;
  tail: TailResult;
}

interface TailResult { ratePerSecond: number; seconds: number; callsSent: number; callsShown: number; frames: number; frameMs: Distribution; framesOver50Ms: number; framesOver100Ms: number; longTasks: number; longestTaskMs: number; met: boolean }

async function main(): Promise<void> {
  const uiDir = findUiDir();
  if (!uiDir) throw new Error('dist/ui/ is missing: run `npm run build` first');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cnirec-bench-ui-'));
  const store = createCallStore(openDatabase(path.join(dir, 'calls.db')));
  const startUs = (Date.now() - 3 * 3600_000) * 1000;
  const story = busyPod('bench', 'busy-0', SANDBOXES, startUs);
  store.writeEvents(story.map((call) => ({ type: 'call.finished' as const, call })));

  const listeners = new Set<CallListener>();
  const nowIso = new Date().toISOString();
  const app = await buildApp({
    tracerStatus: () => ({ running: true, ready: true, mode: 'full', payloadPath: 'syscall-exit', standby: null, pid: 1, restarts: 0, lostEvents: 0, malformedLines: 0, lastRecordAt: nowIso, startedAt: nowIso, lastError: null, handoffInProgress: false, gaps: 0, gapSeconds: 0, lastGap: null, reorderWindowMs: 0, arrivalLagMs: 0 }),
    collectorStats: () => ({ openCalls: 0, oldestRunningStartUs: null, callsStarted: 0, callsFinished: 0, records: 0, unattributed: 0, strayChunks: 0, callsMarked: { 'tracer-lost': 0, 'payload-tracer-cut': 0, 'payloads-never-came': 0, 'early-overflow': 0, 'out-of-order': 0 } }),
    storeStatus: () => ({ writable: true, lastError: null, failingSince: null, pendingWrites: 0, droppedWrites: 0, databaseBytes: 0 }),
    store,
    token: null,
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    uiDir,
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  try {
    const storyResult = await measureStory(browser, base, story.length);
    // The same page with nothing arriving: what this machine's Chromium gives at best.
    const idle = await measureTail(browser, base, listeners, 0, IDLE_SECONDS);
    const tailResult = await measureTail(browser, base, listeners, TAIL_RATE, TAIL_SECONDS);
    const results: Results = { machine: await machine(browser), story: storyResult, idle, tail: tailResult };
    writeResults(results);
    console.log(JSON.stringify(results, null, 2));
  } finally {
    await browser.close();
    await app.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

type Browser = Awaited<ReturnType<typeof chromium.launch>>;

/**
 * The page's window, as the functions run in it see it. They are sent to the page as functions through
 * DevTools (a string would be eval'd, which the web view's CSP refuses); this file is compiled for Node,
 * without the DOM's types, hence the few it uses, declared here (a cast: the functions are sent as their
 * source text, so they may not call anything of this file).
 */
interface PageWindow {
  document: { querySelectorAll(selector: string): { length: number }; querySelector(selector: string): { textContent: string | null } | null };
  requestAnimationFrame(callback: (time: number) => void): number;
  frames_: number[];
  longTasks_: number[];
}

async function measureStory(browser: Browser, base: string, calls: number): Promise<Results['story']> {
  const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
  const times: number[] = [];
  let rows = 0;
  for (let run = 0; run < STORY_RUNS + 1; run++) {
    await page.goto('about:blank');
    await page.goto(`${base}/ui/pods/bench/busy-0`);
    // Drawn: every call's row is in the page (helpers too), measured from the navigation's start.
    await page.waitForFunction((n) => (globalThis as unknown as PageWindow).document.querySelectorAll('.wf-row[data-kind="call"]').length >= n, calls, { polling: 'raf', timeout: 30_000 });
    const ms = await page.evaluate(() => new Promise<number>((resolve) => (globalThis as unknown as PageWindow).requestAnimationFrame(() => resolve(performance.now()))));
    rows = await page.locator('.wf-row').count();
    times.push(ms);
  }
  await page.context().close();
  const [first, ...warm] = times;
  const drawnMs = distribution(warm);
  return { calls, rows, runs: warm.length, drawnMs, firstLoadMs: round(first!, 1), targetMs: 1000, met: Math.max(...times) <= 1000 };
}

async function measureTail(browser: Browser, base: string, listeners: Set<CallListener>, rate: number, seconds: number): Promise<TailResult> {
  const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
  await page.goto(`${base}/ui/tail`);
  await page.locator('.tail-status[data-state="live"]').waitFor();
  // Frame intervals and long tasks, recorded in the page (DevTools evaluation is not subject to the page's CSP).
  await page.evaluate(() => {
    const w = (globalThis as unknown as PageWindow);
    w.frames_ = [];
    w.longTasks_ = [];
    let last = performance.now();
    const tick = (t: number) => {
      w.frames_.push(t - last);
      last = t;
      w.requestAnimationFrame(tick);
    };
    w.requestAnimationFrame(tick);
    new PerformanceObserver((list) => list.getEntries().forEach((e) => w.longTasks_.push(e.duration))).observe({ entryTypes: ['longtask' as never] }); // a browser entry type Node's types do not list
  });

  const total = rate * seconds;
  let sent = 0;
  const publish = (events: Parameters<CallListener['onEvents']>[0]) => listeners.forEach((l) => l.onEvents(events));
  const t0 = Date.now();
  await new Promise<void>((resolve) => {
    // Every 10 ms, the calls due by then: each starts, and finishes 20 ms later, as a plugin would.
    const finishing: { at: number; call: CniCall }[] = [];
    const timer = setInterval(() => {
      const now = Date.now();
      const due = Math.min(total, Math.floor(((now - t0) / 1000) * rate));
      const started: CniCall[] = [];
      for (; sent < due; sent++) {
        const call = benchCall({ namespace: 'tail', pod: `pod-${sent % 50}`, containerId: `c${sent}`.padEnd(64, '0'), command: sent % 2 ? 'DEL' : 'ADD', plugin: 'bridge', startedAtUs: now * 1000, durationUs: 20_000, exitCode: sent % 17 === 0 ? 1 : 0 });
        started.push(call);
        finishing.push({ at: now + 20, call });
      }
      if (started.length) publish(started.map((call) => ({ type: 'call.started' as const, call: { ...call, endedAtUs: null, durationUs: null, outcome: null, status: 'running' as const } })));
      const done = finishing.filter((f) => f.at <= now);
      if (done.length) {
        finishing.splice(0, done.length);
        publish(done.map((f) => ({ type: 'call.finished' as const, call: f.call })));
      }
      if (sent >= total && finishing.length === 0 && now - t0 >= seconds * 1000) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  await page.waitForTimeout(500);
  const { frames, longTasks, shown } = await page.evaluate(() => {
    const w = (globalThis as unknown as PageWindow);
    const status = w.document.querySelector('.tail-status')?.textContent ?? '';
    return { frames: w.frames_.slice(1), longTasks: w.longTasks_, shown: Number(/(\d+) calls/.exec(status)?.[1] ?? 0) };
  });
  await page.context().close();
  const frameMs = distribution(frames);
  const over100 = frames.filter((f) => f > 100).length;
  return {
    ratePerSecond: rate,
    seconds,
    callsSent: sent,
    callsShown: shown,
    frames: frames.length,
    frameMs,
    framesOver50Ms: frames.filter((f) => f > 50).length,
    framesOver100Ms: over100,
    longTasks: longTasks.length,
    longestTaskMs: round(Math.max(0, ...longTasks), 1),
    met: over100 === 0,
  };
}

async function machine(browser: Browser): Promise<Results['machine']> {
  return {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model ?? 'unknown',
    memGiB: round(os.totalmem() / 1024 ** 3, 1),
    node: process.version,
    chromium: browser.version(),
    date: new Date().toISOString(),
  };
}

function writeResults(r: Results): void {
  const out = path.join(ROOT, 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'ui.json'), `${JSON.stringify(r, null, 2)}\n`);
  const d = (x: Distribution) => `median ${round(x.p50, 1)}, p99 ${round(x.p99, 1)}, max ${round(x.max, 1)}`;
  const md = [
    '# Web view in headless Chromium (`bench/ui.ts`)',
    '',
    `${r.machine.date} · ${r.machine.cpus} × ${r.machine.model}, ${r.machine.memGiB} GiB · Node ${r.machine.node} · Chromium ${r.machine.chromium} (headless, shared machine)`,
    '',
    '| what | result | target | met |',
    '|---|---|---|---|',
    `| busy pod story drawn (${r.story.calls} calls, ${r.story.rows} rows with helpers), ms from navigation, ${r.story.runs} warm loads | ${d(r.story.drawnMs)} (first load ${r.story.firstLoadMs}) | ≤ 1000 | ${r.story.met ? 'yes' : 'NO'} |`,
    `| the tail page with nothing arriving (this machine's baseline): frame interval, ms (${r.idle.frames} frames) | ${d(r.idle.frameMs)}; ${r.idle.framesOver50Ms} over 50 ms, ${r.idle.framesOver100Ms} over 100 ms | | |`,
    `| live tail at ${r.tail.ratePerSecond} calls/s for ${r.tail.seconds} s: frame interval, ms (${r.tail.frames} frames) | ${d(r.tail.frameMs)}; ${r.tail.framesOver50Ms} over 50 ms, ${r.tail.framesOver100Ms} over 100 ms | no frame over 100 | ${r.tail.met ? 'yes' : 'NO'} |`,
    `| live tail: long tasks (> 50 ms) | ${r.tail.longTasks}, longest ${r.tail.longestTaskMs} ms | | |`,
    `| live tail: calls counted by the page / sent | ${r.tail.callsShown} / ${r.tail.callsSent} | all | ${r.tail.callsShown === r.tail.callsSent ? 'yes' : 'NO'} |`,
    '',
  ].join('\n');
  writeFileSync(path.join(out, 'ui.md'), md);
}

await main();
