/**
 * The daemon's settings as a bundle shows them: each flag with the value in
 * force as text (patterns as written, lists joined), the token never — only
 * whether one is set — and no password of a URL.
 */

import { flagName, settings, type DaemonConfig, type SettingName } from './config.js';

function text(value: unknown): unknown {
  if (value instanceof RegExp) return value.source;
  if (Array.isArray(value)) return value.map(text);
  if (typeof value === 'object' && value !== null && 'text' in value) return (value as { text: unknown }).text;
  if (typeof value === 'object' && value !== null && 'raw' in value) return (value as { raw: unknown }).raw;
  return value;
}

export function settingsView(config: DaemonConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(settings) as SettingName[]) {
    const value = config[name];
    if (name === 'token') out[flagName(name)] = value ? '(set, not shown)' : '';
    else if (name === 'otlpEndpoint') out[flagName(name)] = typeof value === 'string' ? value.replace(/\/\/([^/@:]+):[^/@]*@/, '//$1:[redacted]@') : value;
    else out[flagName(name)] = text(value);
  }
  return out;
}
