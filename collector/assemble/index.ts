/**
 * The assembler's public surface for the rest of the collector: frames in,
 * calls out (CallAssembler), the process table the merger reads too, and the
 * CNI_* env decoding the cache watcher shares.
 */

export { CallAssembler, callId, type AssemblerCounters, type AssemblerHeldState, type AssemblerOptions, type LossWindow } from './assembler.js';
export { isInCniPath, podFromArgs } from './cni-env.js';
export { ProcessTable } from './process-table.js';
