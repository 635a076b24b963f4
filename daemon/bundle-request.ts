/**
 * A bundle request from what a person or a client asked: the window
 * (default: the last 6 hours), pods as namespace/name (a UID narrows one),
 * calls, payloads or not, a size bound; and the file name a bundle gets.
 */

import type { PodSelector } from '../store/index.js';
import { DEFAULT_BUNDLE_WINDOW_MS, type BundleRequest } from './make-bundle.js';

export interface BundleAsk {
  readonly sinceUs?: number | undefined;
  readonly untilUs?: number | undefined;
  /** namespace/name each. */
  readonly pods?: readonly string[] | undefined;
  readonly podUid?: string | undefined;
  readonly calls?: readonly string[] | undefined;
  readonly payloads?: boolean | undefined;
  readonly maxBytes?: number | null | undefined;
}

export function bundleRequest(ask: BundleAsk, nowMs: number): BundleRequest {
  const untilMs = ask.untilUs === undefined ? nowMs : Math.ceil(ask.untilUs / 1000);
  const sinceMs = ask.sinceUs === undefined ? untilMs - DEFAULT_BUNDLE_WINDOW_MS : Math.floor(ask.sinceUs / 1000);
  const pods: PodSelector[] = (ask.pods ?? []).map((p) => {
    const [namespace = '', name = ''] = p.split('/');
    return { namespace, name, uid: ask.podUid ?? null };
  });
  return { sinceMs, untilMs, pods, calls: [...new Set(ask.calls ?? [])], payloads: ask.payloads ?? true, maxBytes: ask.maxBytes ?? null };
}

/** cnirec-<node>-<what>-<when>.tar.gz, in characters every file system and shell takes as they are. */
export function bundleFileName(node: string, request: BundleRequest, nowMs: number): string {
  const what =
    request.pods.length === 1 && request.calls.length === 0
      ? `${request.pods[0]!.namespace}_${request.pods[0]!.name}`
      : request.calls.length === 1 && request.pods.length === 0
        ? `call-${request.calls[0]!.slice(0, 12)}`
        : request.pods.length + request.calls.length > 0
          ? 'selected'
          : 'node';
  const when = new Date(nowMs).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `cnirec-${node}-${what}-${when}.tar.gz`.replace(/[^A-Za-z0-9._-]/g, '_');
}
