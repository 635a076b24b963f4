import { describe, expect, it } from 'vitest';
import { withKernelMessage } from '../../../collector/changes/index.js';

const mtu = [{ atUs: 1, pid: 9, process: 'bridge', message: 'mtu greater than device maximum' }];

describe("a failed call's one-line error and the kernel's message", () => {
  it('adds the kernel text to an error that ends in a bare errno text', () => {
    expect(withKernelMessage('failed to create bridge "cnimtu0": could not add "cnimtu0": invalid argument', mtu)).toBe(
      'failed to create bridge "cnimtu0": could not add "cnimtu0": invalid argument (kernel: mtu greater than device maximum)',
    );
  });

  it('puts the kernel text first when the error is only the errno text', () => {
    expect(withKernelMessage('invalid argument', mtu)).toBe('mtu greater than device maximum (invalid argument)');
  });

  it('uses the kernel text when the plugin said nothing, and leaves an error that says why alone', () => {
    expect(withKernelMessage(null, mtu)).toBe('mtu greater than device maximum');
    expect(withKernelMessage('no IP addresses available in range set', mtu)).toBe('no IP addresses available in range set');
    expect(withKernelMessage('invalid argument', [])).toBe('invalid argument');
  });
});
