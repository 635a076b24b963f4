/**
 * The assembler's public surface for the rest of the collector: records in,
 * calls out (CallAssembler), the canary's marks the tracer prints and checks,
 * and the CNI_* env decoding the cache watcher shares.
 */

export { CallAssembler, CANARY_COMMAND, CANARY_OUTPUT, callId, type AssemblerCounters, type AssemblerHeldState, type AssemblerOptions, type LossWindow } from './assembler.js';
export { isInCniPath, podFromArgs } from './cni-env.js';
