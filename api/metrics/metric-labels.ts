/**
 * Label values for call metrics, kept to a small, bounded set: every new
 * value is a new time series in Prometheus, and command and plugin come
 * from whatever a process put in its environment and argv.
 */

import { isInCniPath, type CniCall } from '../../collector/index.js';

const KNOWN_COMMANDS = new Set(['ADD', 'DEL', 'CHECK', 'VERSION', 'GC', 'STATUS']);
/** A node runs a handful of plugins; beyond this something is wrong and the rest share "other". */
const MAX_PLUGIN_LABELS = 64;
const MAX_PLUGIN_LABEL_LENGTH = 64;

export const OTHER = 'other';

/**
 * A CNI plugin, as opposed to another program that happened to run with CNI_COMMAND in its
 * environment (`ip netns exec … plugin`, `sh -c …` by a person or a test harness: the collector
 * records those as calls too, since their parent is not traced). A plugin is what libcni runs: a
 * binary in one of the CNI_PATH directories. Only plugins name their own `plugin` label, so the
 * label's values stay the node's plugins.
 */
export function isPluginCall(call: Pick<CniCall, 'path' | 'env'>): boolean {
  return isInCniPath(call.path, call.env.CNI_PATH);
}

export function commandLabel(command: string | null): string {
  return command !== null && KNOWN_COMMANDS.has(command) ? command : OTHER;
}

/** Remembers the plugin names it has let through, so the set cannot grow past the cap. */
export function createPluginLabeler(maxLabels = MAX_PLUGIN_LABELS): (plugin: string) => string {
  const seen = new Set<string>();
  return (plugin) => {
    if (seen.has(plugin)) return plugin;
    if (plugin.length === 0 || plugin.length > MAX_PLUGIN_LABEL_LENGTH || seen.size >= maxLabels) return OTHER;
    seen.add(plugin);
    return plugin;
  };
}

/** A node has a handful of CNI networks; beyond this the rest share "other". */
const MAX_NETWORK_LABELS = 32;

/** A call's network as a label: "" when not known, "other" past the cap. */
export function createNetworkLabeler(maxLabels = MAX_NETWORK_LABELS): (network: string | null) => string {
  const seen = new Set<string>();
  return (network) => {
    const name = network ?? '';
    if (seen.has(name)) return name;
    if (name.length > MAX_PLUGIN_LABEL_LENGTH * 4 || seen.size >= maxLabels) return OTHER;
    seen.add(name);
    return name;
  };
}
