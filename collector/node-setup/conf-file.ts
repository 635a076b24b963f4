/**
 * One file of a CNI conf dir, read as libcni reads it: a `.conflist` is a
 * network configuration list (`name`, `cniVersion`, `plugins`); a `.conf` or
 * `.json` is a single plugin's configuration (`type` required), which
 * runtimes wrap into a list of one. Returns what the runtime would load, or
 * why it would refuse the file, in libcni's own terms.
 */

import { jsonErrorPosition } from './json-position.js';
import type { JsonErrorPosition } from './types.js';

/** A plugin type a network needs, and where in the file it is named (`plugins[0].ipam.type`). */
export interface PluginRef {
  readonly type: string;
  readonly at: string;
}

export type ParsedConf =
  | {
      readonly ok: true;
      readonly kind: 'conf' | 'conflist';
      /** The network's name; null for a `.conf` without one (CRI-O then names it after the file). */
      readonly name: string | null;
      /** Null when absent: plugins then read the config as CNI 0.1.0. */
      readonly cniVersion: string | null;
      /** Every type it needs: plugins, their IPAM, Multus delegates, flannel's delegate. */
      readonly plugins: readonly PluginRef[];
    }
  | {
      readonly ok: false;
      readonly code: 'json-syntax' | 'conf-invalid';
      /** libcni's refusal, for a person. */
      readonly error: string;
      readonly position: JsonErrorPosition | null;
    };

type Json = { readonly [k: string]: unknown };
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Extensions libcni.ConfFiles picks up; anything else in the conf dir is ignored. */
export const CONF_EXTENSIONS = ['.conf', '.conflist', '.json'] as const;

export function confKindOf(name: string): 'conf' | 'conflist' | null {
  const ext = name.slice(name.lastIndexOf('.'));
  if (!name.includes('.') || !(CONF_EXTENSIONS as readonly string[]).includes(ext)) return null;
  return ext === '.conflist' ? 'conflist' : 'conf';
}

export function parseConf(fileName: string, bytes: Buffer): ParsedConf {
  const text = bytes.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    const position = jsonErrorPosition(text, err);
    return { ok: false, code: 'json-syntax', error: `invalid JSON at line ${position.line}, column ${position.column}: ${position.message}`, position };
  }
  const invalid = (error: string): ParsedConf => ({ ok: false, code: 'conf-invalid', error, position: null });
  if (!isObject(json)) return invalid('it is not a JSON object');
  const version = json.cniVersion;
  if (version !== undefined && typeof version !== 'string') return invalid('"cniVersion" must be a string such as "1.0.0"');
  const cniVersion = typeof version === 'string' ? version : null;

  if (confKindOf(fileName) === 'conflist') {
    if (typeof json.name !== 'string' || json.name === '') return invalid('a network list needs a "name": libcni refuses it with "no name"');
    if (!Array.isArray(json.plugins)) return invalid('a .conflist needs a "plugins" list: libcni refuses it with "no \'plugins\' key"');
    if (json.plugins.length === 0) return invalid('its "plugins" list is empty: runtimes skip it as having no networks');
    const plugins: PluginRef[] = [];
    for (const [i, p] of json.plugins.entries()) {
      if (!isObject(p) || typeof p.type !== 'string' || p.type === '') return invalid(`plugins[${i}] has no "type": libcni refuses it with "missing 'type'"`);
      plugins.push(...typesOf(p, `plugins[${i}]`));
    }
    return { ok: true, kind: 'conflist', name: json.name, cniVersion, plugins };
  }

  if (Array.isArray(json.plugins)) {
    return invalid('it holds a network list ("plugins") but is not named .conflist: runtimes read it as one plugin config and fail with "no type"; rename it to .conflist');
  }
  if (typeof json.type !== 'string' || json.type === '') return invalid('it has no "type": runtimes refuse it ("network type not found")');
  return { ok: true, kind: 'conf', name: typeof json.name === 'string' && json.name !== '' ? json.name : null, cniVersion, plugins: typesOf(json, '') };
}

/** The plugin's own type, its IPAM's, and what it delegates to. */
function typesOf(p: Json, at: string): PluginRef[] {
  const prefix = at === '' ? '' : `${at}.`;
  const out: PluginRef[] = [{ type: p.type as string, at: `${prefix}type` }];
  if (isObject(p.ipam) && typeof p.ipam.type === 'string' && p.ipam.type !== '') out.push({ type: p.ipam.type, at: `${prefix}ipam.type` });
  // Multus (thin): delegates are whole confs or conflists it runs itself.
  if (Array.isArray(p.delegates)) {
    for (const [i, d] of p.delegates.entries()) {
      if (!isObject(d)) continue;
      if (Array.isArray(d.plugins)) {
        for (const [j, dp] of d.plugins.entries()) if (isObject(dp) && typeof dp.type === 'string') out.push(...typesOf(dp, `${prefix}delegates[${i}].plugins[${j}]`));
      } else if (typeof d.type === 'string') {
        out.push(...typesOf(d, `${prefix}delegates[${i}]`));
      }
    }
  }
  // flannel runs its delegate (bridge unless it says otherwise) with host-local IPAM unless the delegate names one.
  if (p.type === 'flannel') {
    const d = isObject(p.delegate) ? p.delegate : {};
    out.push({ type: typeof d.type === 'string' && d.type !== '' ? d.type : 'bridge', at: `${prefix}delegate.type` });
    if (!(isObject(d.ipam) && typeof d.ipam.type === 'string')) out.push({ type: 'host-local', at: `${prefix}delegate.ipam.type` });
    else out.push({ type: d.ipam.type, at: `${prefix}delegate.ipam.type` });
  }
  return out;
}
