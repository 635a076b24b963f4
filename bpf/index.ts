/**
 * The bpftrace program and the line protocol it prints: the first layer, which every other reads
 * records and capture modes from.
 */

export { bpftraceEnv, programText } from './program.js';
export { type CaptureMode, type PayloadPath, IOV_LIMIT, EXEC_BLOCK_CAP_BYTES, EXEC_HEADER_PATH_BYTES, EXEC_PATH_CAP_BYTES, CWD_WALK_STEPS, PAYLOAD_CAP_BYTES, TID_SPACE, NETLINK_CAP_BYTES, type TracerRecord, type ChunkLine, type TracerLineError, expectedChunks, parseTracerBytes, parseTracerLine, readChunkLine, decodeHexInto, hexBytes, followsHeader } from './tracer-protocol.js';
export { type ExecFrame, type PayloadFrame, type NetlinkFrame, type TracerFrame, type KernelFrame, isKernelFrame } from './tracer-frames.js';
