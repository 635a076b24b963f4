/**
 * The store's edge for what CNI 1.1 added: every call is named by its
 * network on its way to the store (stdin, parent, conf by plugin type), and
 * STATUS heartbeats are sieved. A STATUS call and the calls it delegates to
 * are held until it ends; then the rules (heartbeat-rules.ts) fold a healthy
 * answer like the last into its network's readiness row, or keep the tree
 * whole and pass it on. Subscribers (the writer, binary provenance, export)
 * hear only what is kept. The readiness findings (`network-not-ready`,
 * `status-flapping`) are opened and resolved here, as answers come; a GC
 * that is kept marks the DELs it ran first (gc-dels.ts).
 *
 * The database's failures never reach the collector: they go to `onError`,
 * and readiness goes on in memory.
 */

import type { Database } from 'better-sqlite3';
import { callSucceeded, type CallListener, type CniCall, type CollectorEvent } from '../../collector/index.js';
import { createGuard, createTopic } from '../../lib/index.js';
import { networkOfStdin } from '../calls/index.js';
import { createFindingsLog } from '../findings/index.js';
import { createConfNetworks } from './conf-networks.js';
import { createGcDelMarker } from './gc-dels.js';
import { applyCheck, FLAP_MAX_TRANSITIONS, FLAP_WINDOW_MS, networkReadiness, transitionOf, transitionsInWindow, type HeartbeatRuleOptions } from './heartbeat-rules.js';
import { flappingMessage, notReadyMessage, readinessSubject } from './not-ready-text.js';
import { createReadinessLog } from './readiness-log.js';
import { cniErrorOf } from './status-answer.js';
import type { NetworkReadiness, PluginReadiness, ReadinessListener, ReadinessTransition, StatusCheck } from './types.js';

/** STATUS trees held at once; past this (a runtime gone wild, or ends never seen) they pass unsieved. */
const MAX_HELD = 10_000;
/** Calls whose network is remembered for their delegates. */
const MAX_REMEMBERED = 50_000;
/** Transitions kept in memory per network: enough for the flapping window and the timeline's head. */
const RECENT_TRANSITIONS = 50;

export interface HeartbeatSieveOptions extends HeartbeatRuleOptions {
  readonly onError: (err: unknown) => void;
  readonly now?: () => number;
}

export interface HeartbeatSieve extends CallListener {
  /** Hears the events that are kept (every call but folded heartbeats), each call named by its network. */
  subscribe(listener: CallListener): () => void;
  subscribeReadiness(listener: ReadinessListener): () => void;
  /** Every network asked, by name (the unknown one last). */
  networks(): NetworkReadiness[];
  /** Resolves a flapping finding whose window has passed (a timer calls it). */
  tick(nowMs: number): void;
}

const pluginKey = (network: string | null, plugin: string): string => `${network ?? ''}\u0000${plugin}`;
const networkKey = (network: string | null): string => network ?? '';
const isStatusRoot = (c: CniCall): boolean => c.parentId === null && c.command === 'STATUS' && !c.isVersionProbe;

export function createHeartbeatSieve(db: Database, opts: HeartbeatSieveOptions): HeartbeatSieve {
  const now = opts.now ?? Date.now;
  const log = createReadinessLog(db);
  const findings = createFindingsLog(db);
  const confNetworks = createConfNetworks(db);
  const gcDels = createGcDelMarker(db);
  const kept = createTopic<CallListener>(opts.onError);
  const readinessTopic = createTopic<ReadinessListener>(opts.onError);

  const guard = createGuard(opts.onError);

  const plugins = new Map<string, PluginReadiness>();
  for (const p of guard(() => log.plugins(), [])) plugins.set(pluginKey(p.network, p.plugin), p);
  const recent = new Map<string, ReadinessTransition[]>();
  const transitionsOf = (network: string | null): ReadinessTransition[] => {
    const key = networkKey(network);
    let list = recent.get(key);
    if (!list) {
      list = guard(() => log.transitions(network, RECENT_TRANSITIONS), []);
      recent.set(key, list);
    }
    return list;
  };
  /**
   * Changes of readiness in the flapping window: its transitions there, less the network's first answer
   * (no change; the list holds the whole history while it is shorter than RECENT_TRANSITIONS).
   */
  const changesIn = (list: readonly ReadinessTransition[], atMs: number): number => {
    const first = list.length < RECENT_TRANSITIONS ? list.at(-1) : undefined;
    return transitionsInWindow(list, atMs) - (first !== undefined && transitionsInWindow([first], atMs) === 1 ? 1 : 0);
  };
  /** Failing checks of a network since it went not ready: the finding's count (carried over a restart from the open finding). */
  const failingStreak = new Map<string, number>();
  const openCounts = guard(
    () => db.prepare<[], { subject: string; count: number | null }>("SELECT subject, count FROM cache_findings WHERE kind = 'network-not-ready' AND resolved_at_ms IS NULL").all(),
    [],
  );
  for (const p of plugins.values()) {
    const open = openCounts.find((f) => f.subject === readinessSubject(p.network, p.plugin));
    if (!p.ready && open?.count != null) failingStreak.set(networkKey(p.network), open.count);
  }
  const pluginsOf = (network: string | null) => [...plugins.values()].filter((p) => p.network === network);
  const readinessOf = (network: string | null) => networkReadiness(network, pluginsOf(network), transitionsOf(network));

  // STATUS trees: every member's root, and the delegates' finished events waiting for it.
  const rootOf = new Map<string, string>();
  const held = new Map<string, { members: string[]; finished: CollectorEvent[] }>();
  const remembered = new Map<string, string | null>();

  const remember = (id: string, network: string | null) => {
    if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value as string);
    remembered.set(id, network);
  };

  /** The one network whose STATUS asked this plugin before (with stdin, or by conf); null when none or several. */
  const askedNetworkOf = (plugin: string): string | null => {
    let found: string | null = null;
    for (const p of plugins.values()) {
      if (p.plugin !== plugin || p.network === null) continue;
      if (found !== null && found !== p.network) return null;
      found = p.network;
    }
    return found;
  };

  const named = (call: CniCall, nowMs: number): CniCall => {
    let network = networkOfStdin(call.stdin.bytes);
    if (network === null && call.parentId !== null) network = remembered.get(call.parentId) ?? null;
    if (network === null) network = guard(() => confNetworks.networkOfType(call.plugin, nowMs), null);
    // A light-mode call of a plugin no conf lists (a conf dir not followed): the network its STATUS named.
    if (network === null) network = askedNetworkOf(call.plugin);
    remember(call.id, network);
    return call.network === network ? call : { ...call, network };
  };

  const openNotReady = (n: NetworkReadiness, nowMs: number) => {
    const failing = n.failing;
    if (failing === null) return;
    const key = networkKey(n.network);
    const count = failingStreak.get(key) ?? 0;
    findings.open('network-not-ready', readinessSubject(n.network, failing.plugin), { message: notReadyMessage(n, failing, count), network: n.network, callId: failing.lastCallId, count }, nowMs);
  };

  const check = (call: CniCall): boolean => {
    const nowMs = now();
    const network = call.network ?? null;
    const c: StatusCheck = {
      callId: call.id,
      network,
      plugin: call.plugin,
      atMs: call.endedAtUs === null ? nowMs : Math.floor(call.endedAtUs / 1000),
      ok: callSucceeded(call),
      durationUs: call.durationUs,
      exitCode: call.outcome?.exitCode ?? null,
      signal: call.outcome?.signal ?? null,
      answer: cniErrorOf(call.stdout.bytes),
    };
    const key = pluginKey(network, call.plugin);
    const before = readinessOf(network);
    const result = applyCheck(plugins.get(key) ?? null, c, opts);
    plugins.set(key, result.state);
    guard(() => log.savePlugin(result.state), undefined);
    const nKey = networkKey(network);
    failingStreak.set(nKey, c.ok ? 0 : (failingStreak.get(nKey) ?? 0) + 1);

    const list = transitionsOf(network);
    const t = transitionOf(before, readinessOf(network), c);
    if (t !== null) {
      const saved = guard(() => log.addTransition(t), { ...t, id: 0 });
      list.unshift(saved);
      if (list.length > RECENT_TRANSITIONS) list.length = RECENT_TRANSITIONS;
    } else if (result.filledIn && list[0] !== undefined && !list[0].ready && list[0].errorMsg === null) {
      // The first failures came in light mode: this answer, captured, says what they were.
      const first = list[0];
      list[0] = { ...first, errorCode: first.errorCode ?? result.state.error?.code ?? null, errorMsg: result.state.error?.msg ?? null };
      guard(() => log.fillTransitionError(first.id, result.state.error?.code ?? null, result.state.error?.msg ?? null), undefined);
    }
    const after = readinessOf(network);

    guard(() => {
      if (after.ready === false) openNotReady(after, nowMs);
      else if (after.ready === true && before.ready === false) {
        for (const p of before.plugins) findings.resolve('network-not-ready', readinessSubject(network, p.plugin), nowMs);
      }
      const changes = changesIn(list, c.atMs);
      if (t !== null && changes > FLAP_MAX_TRANSITIONS) {
        const fields = { message: flappingMessage(network, changes, FLAP_WINDOW_MS / 60_000), network, callId: call.id, count: changes };
        findings.open('status-flapping', readinessSubject(network, call.plugin), fields, nowMs);
      }
    }, undefined);

    readinessTopic.publish((l) => l.onReadiness({ type: 'check', network, plugin: call.plugin, ok: c.ok, durationUs: c.durationUs }));
    if (t !== null || result.filledIn) readinessTopic.publish((l) => l.onReadiness({ type: 'change', readiness: after }));
    return result.keep !== null;
  };

  const forget = (root: string) => {
    const tree = held.get(root);
    for (const id of tree?.members ?? [root]) rootOf.delete(id);
    held.delete(root);
  };

  const sieve = (events: readonly CollectorEvent[]): CollectorEvent[] => {
    const nowMs = now();
    const out: CollectorEvent[] = [];
    for (const e of events) {
      const call = named(e.call, nowMs);
      const event: CollectorEvent = call === e.call ? e : { type: e.type, call };
      const root = isStatusRoot(call) ? call.id : call.parentId !== null ? rootOf.get(call.parentId) : undefined;
      if (root === undefined) {
        out.push(event);
        continue;
      }
      if (e.type === 'call.started') {
        if (root === call.id && !held.has(root) && held.size >= MAX_HELD) {
          out.push(event);
          continue;
        }
        rootOf.set(call.id, root);
        const tree = held.get(root) ?? { members: [], finished: [] };
        tree.members.push(call.id);
        held.set(root, tree);
        continue;
      }
      if (call.id !== root) {
        const tree = held.get(root);
        if (tree) tree.finished.push(event);
        else out.push(event);
        continue;
      }
      const tree = held.get(root);
      forget(root);
      // An end never seen says nothing about readiness: the call is kept, as any incomplete call.
      // Not held (its start passed unsieved, or never came): its row may be there already, so it is kept.
      const keep = call.status === 'incomplete' ? true : check(call) || tree === undefined;
      // Delegates ended before their parent's stdin was known: unnamed ones take its network.
      const rootNetwork = call.network ?? null;
      const delegates = (tree?.finished ?? []).map((d): CollectorEvent => (d.call.network == null && rootNetwork !== null ? { type: d.type, call: { ...d.call, network: rootNetwork } } : d));
      if (keep) out.push(...delegates, event);
    }
    return out;
  };

  return {
    onEvents(events) {
      let out: CollectorEvent[];
      try {
        out = sieve(events);
      } catch (err) {
        // Whatever goes wrong here must not cost the record its calls: they go on unsieved.
        opts.onError(err);
        out = [...events];
      }
      if (out.length === 0) return;
      kept.publish((l) => l.onEvents(out));
      // After the writer has the GC's DELs and the GC itself.
      for (const e of out) if (e.type === 'call.finished' && e.call.command === 'GC') guard(() => gcDels.mark(e.call), 0);
    },
    subscribe: (listener) => kept.subscribe(listener),
    subscribeReadiness: (listener) => readinessTopic.subscribe(listener),
    networks() {
      const names = new Set([...plugins.values()].map((p) => p.network));
      return [...names].sort((a, b) => (a === null ? 1 : b === null ? -1 : a.localeCompare(b))).map(readinessOf);
    },
    tick(nowMs) {
      guard(() => {
        for (const subject of findings.openSubjects('status-flapping')) {
          const n = [...plugins.values()].find((p) => readinessSubject(p.network, p.plugin) === subject || (p.network !== null && p.network === subject));
          const list = n ? transitionsOf(n.network) : [];
          if (changesIn(list, nowMs) <= FLAP_MAX_TRANSITIONS) findings.resolve('status-flapping', subject, nowMs);
        }
      }, undefined);
    },
  };
}
