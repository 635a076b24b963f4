/**
 * The kernel's exit_code is a wait(2) status: low 7 bits the killing signal
 * (0x80 core dumped), else bits 8-15 the exit code. For a group exit
 * (exit_group, fatal signal) the group's code is the one that counts.
 */

import type { ProcessOutcome } from '../types.js';

const SIGNAL_GROUP_EXIT = 0x4;

export function decodeWaitStatus(exitCode: number, groupExitCode: number, signalFlags: number): ProcessOutcome {
  const status = (signalFlags & SIGNAL_GROUP_EXIT) !== 0 ? groupExitCode : exitCode;
  const signal = status & 0x7f;
  if (signal === 0) return { exitCode: (status >> 8) & 0xff, signal: null, coreDumped: false };
  return { exitCode: null, signal, coreDumped: (status & 0x80) !== 0 };
}
