// `cnirec tail`: a delegated call ends before the call that ran it; its line still goes under its parent's.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTailPrinter } from '../../cli/tail-command.js';
import { callView } from './cli-fixture.js';

const plain = (s: string) => s.replace(/[\ue000-\ue00f]/g, '');

describe('the tail printer', () => {
  let printed: string[];
  const printer = () => createTailPrinter((lines) => printed.push(...lines.map(plain)), 2000);
  const bridge = callView({ id: 'bridge-1' });
  const ipam = callView({ id: 'ipam-1', plugin: 'host-local', parentId: 'bridge-1', parentProcess: null });

  beforeEach(() => {
    printed = [];
    vi.useFakeTimers();
  });
  afterEach(() => vi.useRealTimers());

  it('prints a delegated call that ended first under its parent once that one ends', () => {
    const p = printer();
    p.call('call.started', { ...bridge, status: 'running' });
    p.call('call.started', { ...ipam, status: 'running' });
    p.call('call.finished', ipam);
    expect(printed).toHaveLength(2);
    p.call('call.finished', bridge);
    expect(printed.slice(2).map((l) => l.split(/ +/).slice(1, 3).join(' '))).toEqual(['ADD bridge', '└ ADD']);
    expect(printed[3]).toMatch(/└ ADD +host-local .* ipam-1$/);
  });

  it('lets it through after a while, saying whose it is, when the parent is still running (a hung plugin)', () => {
    const p = printer();
    p.call('call.started', { ...bridge, status: 'running' });
    p.call('call.finished', ipam);
    vi.advanceTimersByTime(2001);
    expect(printed.at(-1)).toMatch(/ipam-1 {2}\(delegated by bridge-1, still running\)$/);
    p.call('call.finished', bridge);
    expect(printed.filter((l) => l.includes('ipam-1'))).toHaveLength(1);
  });

  it('puts a replayed child (it comes after its parent, both ended) right under the parent', () => {
    const p = printer();
    p.call('call.finished', bridge);
    p.call('call.finished', ipam);
    expect(printed[1]).toMatch(/└ ADD +host-local .* ipam-1$/);
  });

  it('prints an update of a printed call as one more line, marked with what came after the plugin exited', () => {
    const p = printer();
    p.call('call.finished', bridge);
    p.call('call.updated', { ...bridge, payload: { ...bridge.payload, stderr: { bytes: 5, totalBytes: 5, truncated: false } }, outputAfterExit: { stdout: null, stderr: 0 } });
    expect(printed).toHaveLength(2);
    expect(printed[1]).toMatch(/ADD +bridge .*bridge-1 {2}\(updated: 5 bytes of stderr written after the plugin exited\)$/);
  });

  it('swaps an update of a held delegated call into its place, printing it once', () => {
    const p = printer();
    p.call('call.started', { ...bridge, status: 'running' });
    p.call('call.finished', ipam);
    p.call('call.updated', { ...ipam, error: 'changed' });
    expect(printed).toHaveLength(1);
    p.call('call.finished', bridge);
    expect(printed.filter((l) => l.includes('ipam-1'))).toHaveLength(1);
    expect(printed.filter((l) => l.includes('updated'))).toEqual([]);
  });
});
