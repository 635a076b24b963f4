/**
 * CallSummary, the shape of a call in every list, pod view and tail message
 * (contract v1: fields may be added, never renamed). Built from stored and
 * live calls alike by one mapping (api/present/call-summary.ts), so both
 * sides of the API say the same thing.
 */

import { z } from 'zod';
import { LOST_RECORDS_CAUSES } from '../../collector/index.js';
import { kernelMessageSchema } from './kernel.js';
import { processRunFields, streamSizeSchema } from './process.js';

export const podRefSchema = z
  .object({
    namespace: z.string(),
    name: z.string(),
    uid: z.string().nullable(),
  })
  .describe('The pod, from K8S_POD_* in CNI_ARGS');

export const callSummarySchema = z
  .object({
    id: z.string(),
    command: z.string().nullable().describe('CNI_COMMAND: ADD, DEL, CHECK, VERSION, GC, STATUS'),
    plugin: z.string().describe('The plugin binary name'),
    path: z.string(),
    pid: z.number().int(),
    ppid: z.number().int(),
    parentId: z.string().nullable().describe('The delegating call (bridge for its host-local), null for a runtime call'),
    parentProcess: z
      .object({ pid: z.number().int(), comm: z.string().nullable(), exe: z.string().nullable() })
      .nullable()
      .describe('The runtime process that exec’d a top-level call'),
    containerId: z.string().nullable(),
    netns: z.string().nullable(),
    network: z
      .string()
      .nullable()
      .describe('The CNI network the call was about: `name` from its stdin when captured, else its parent’s, else the network whose active conf lists this plugin type; null when none is known'),
    gcDriven: z.boolean().describe('A DEL that libcni’s GC ran first, for a cached attachment missing from the GC’s cni.dev/valid-attachments'),
    ifname: z.string().nullable(),
    pod: podRefSchema.nullable(),
    podInfraContainerId: z.string().nullable(),
    traceParent: z.string().nullable(),
    ...processRunFields,
    ok: z.boolean().nullable().describe('Exit 0 and no signal; null while running or when the end was not seen'),
    status: z.enum(['running', 'finished', 'incomplete']),
    incomplete: z.boolean(),
    incompleteReason: z.string().nullable().describe('Why an incomplete call has no outcome (the tracer restarted, its exit was never seen…)'),
    error: z
      .string()
      .nullable()
      .describe("A failed call's error in one line: the CNI error's msg (and details) from stdout, else the first line of its output; null unless it failed"),
    isVersionProbe: z.boolean(),
    captureMode: z.enum(['full', 'light']),
    lostRecords: z.boolean().describe('The record cannot vouch for this call (see lostRecordsCause): some of its payload, helpers or children may be missing'),
    lostRecordsCause: z
      .enum(LOST_RECORDS_CAUSES)
      .nullable()
      .describe(
        'Why lostRecords is set: tracer-lost (bpftrace dropped records while the call ran: raise --perf-buffer-pages), payload-tracer-cut (the tracer supplying its bytes stopped, after a mode switch or a crash), ' +
          'payloads-never-came (reads/writes its processes announced never arrived), early-overflow (too many of its records came ahead of its exec), out-of-order (its plugin’s exec came after its own: its place in the tree was guessed); null when lostRecords is false or the call was stored before causes were kept',
      ),
    stdioShared: z
      .boolean()
      .describe('The plugin’s stdout and stderr were one open file (a terminal, `2>&1` into one pipe) and some writes went through an fd that stood for neither: those are filed as stdout. Writes through fds that stand for stdout or stderr (1, 2 and their copies, as a shell’s `>&2` makes them) are filed as such and do not set it'),
    uncapturedIo: z
      .number()
      .int()
      .describe('Reads/writes on the call’s stdin, stdout or stderr whose bytes full mode did not take (sendfile, splice, copy_file_range, sendmsg, iovecs past the 2nd…; a copy from stdin to stdout counts as both); the stream is marked truncated'),
    payload: z.object({ stdin: streamSizeSchema, stdout: streamSizeSchema, stderr: streamSizeSchema }),
    envTruncated: z
      .boolean()
      .describe('A CNI_* or trace-context variable was longer than the tracer reads (16 KiB each), there were more than it sends (8), or part was lost (or argv was): values past the cut, and so the command, container or pod, may be missing'),
    pathTruncated: z.boolean().describe('The executable path was longer than the tracer reads: path is its beginning'),
    outputAfterExit: z
      .object({
        stdout: z.number().int().nullable(),
        stderr: z.number().int().nullable(),
      })
      .describe("Where in stdout / stderr the bytes begin that the plugin's descendants wrote after it exited (the caller still received them); null where none were"),
    changeSummary: z
      .string()
      .nullable()
      .describe("What the call changed in the kernel, in a few words (`+3 links, +2 addrs, +1 route, 4 rules; 1 refused`, `no changes`); null when its capture did not take changes (light mode)"),
    kernelMessages: z.array(kernelMessageSchema).describe("The kernel's own error texts for requests of the call's processes, in every capture mode"),
  })
  .describe('CallSummary');

export type CallSummary = z.infer<typeof callSummarySchema>;
