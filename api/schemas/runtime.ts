/**
 * The runtime's side: GET /api/v1/node/runtime (what the node's container
 * runtime says over the CRI: its readiness as a timeline), the tail's
 * `runtime.readiness` message, GET /api/v1/node/cni/gc-plan (what a GC would
 * free, from its sandbox list) and a sandbox's `runtime` in a pod's story.
 */

import { z } from 'zod';
import { RUNTIME_PROBLEM_KINDS } from '../../collector/index.js';
import { component } from './registry.js';

export const runtimeConditionSchema = z
  .object({
    type: z.string().describe('RuntimeReady, NetworkReady, or another the runtime reports'),
    status: z.boolean(),
    reason: z.string().describe('The runtime’s reason, e.g. NetworkPluginNotReady'),
    message: z.string().describe('The runtime’s message, e.g. "Network plugin returns error: cni plugin not initialized"'),
    since: z.string().describe('Since when the runtime says so (as cnirec saw it)'),
  })
  .describe('A condition of CRI Status, as last reported');

export const runtimeTransitionSchema = component(
  'RuntimeTransition',
  z
    .object({
      at: z.string(),
      endpoint: z.string().nullable(),
      type: z.string().describe('The condition that changed, or Reachable (cnirec’s own: whether the runtime answered; its reason is Answering or why not)'),
      status: z.boolean(),
      reason: z.string(),
      message: z.string(),
    })
    .describe('A condition changed (status, reason or message), or the runtime started or stopped answering'),
);

export const recordedSchema = z
  .object({
    takenAt: z.string().describe('When the bundle was taken'),
    node: z.string().describe('The node it was taken on'),
    from: z
      .enum(['daemon', 'runtime', 'record'])
      .describe(
        "What said how the runtime was then: daemon (the daemon's own view), runtime (`cnirec bundle` asked the runtime itself: the daemon was down), record (the record's transitions alone: nothing was asked)",
      ),
    note: z.string().describe('One sentence for a person: as recorded, not live'),
  })
  .nullable()
  .describe('null on a live node. From a bundle opened with `cnirec open`: as recorded on that node when the bundle was taken, not live, and nothing about the machine serving it');

export const runtimeStatusSchema = component(
  'RuntimeStatus',
  z.object({
    endpoint: z.string().nullable().describe('The CRI socket asked (configured, or the first of the usual ones that answered); null when none was found'),
    reachable: z.boolean().describe('The runtime answered the last poll'),
    name: z.string().nullable().describe('CRI Version: runtime_name (containerd, cri-o)'),
    version: z.string().nullable(),
    apiVersion: z.string().nullable().describe('The CRI version it speaks (v1)'),
    conditions: z.array(runtimeConditionSchema).describe('As last reported: kept while the runtime does not answer'),
    transitions: z.array(runtimeTransitionSchema).describe('Newest first (the last 50)'),
    lastCheckedAt: z.string().nullable(),
    answeringSince: z.string().nullable().describe('Since when it has answered every poll'),
    error: z.string().nullable().describe('Why the last poll could not ask it (one sentence); null when it answered'),
    errorKind: z.enum(RUNTIME_PROBLEM_KINDS).nullable().describe('off, absent, refused, denied, timeout, not-cri, v1alpha2-only, error'),
    leaks: z
      .object({
        judging: z.boolean().describe('Whether the runtime’s sandbox list is used to confirm leaks now'),
        why: z.string().nullable().describe('Why not, when not'),
        confirmed: z.number().int(),
        suspected: z.number().int().describe('Missed by one list, waiting for a second one'),
        lastJudgedAt: z.string().nullable(),
      })
      .describe('Leaked attachments the runtime confirms (the leaked-attachment findings)'),
    recorded: recordedSchema,
  }),
);

export const gcPlanItemSchema = component(
  'GcPlanItem',
  z.object({
    containerId: z.string(),
    network: z.string().nullable(),
    ifName: z.string().nullable(),
    addresses: z.array(z.string()),
    pod: z.object({ namespace: z.string(), name: z.string() }).nullable(),
    netns: z.string().nullable(),
    cachePath: z.string().nullable().describe('libcni’s cache entry: its config and netns are what the DEL runs with'),
    reservationPaths: z.array(z.string()).describe('host-local’s reservation files'),
    attachedAt: z.string(),
    missingSince: z.string().describe('When a list of the runtime first missed its sandbox'),
    freeable: z.boolean().describe('A DEL with libcni’s cached config can free it'),
    why: z.string().nullable().describe('Why a DEL cannot free it'),
  }),
);

export const gcPlanSchema = component(
  'GcPlan',
  z.object({
    endpoint: z.string().nullable(),
    reachable: z.boolean(),
    judging: z.boolean().describe('false: the runtime cannot be asked (or has just started), so nothing is listed'),
    why: z.string().nullable(),
    judgedAt: z.string().nullable(),
    suspected: z.number().int(),
    items: z.array(gcPlanItemSchema).describe('Attachments the runtime confirms leaked (checked twice); `cnirec gc --apply` on the node runs their DELs'),
    recorded: recordedSchema,
  }),
);

export const sandboxRuntimeSchema = component(
  'SandboxRuntime',
  z
    .object({
      state: z.enum(['ready', 'notready']),
      createdAt: z.string(),
      ip: z.string().nullable().describe('The pod IP the runtime reports'),
      additionalIps: z.array(z.string()),
      uid: z.string(),
      attempt: z.number().int(),
      runtimeHandler: z.string(),
      labels: z.record(z.string(), z.string()),
      annotations: z.record(z.string(), z.string()).describe('As the CRI gives them, redacted (kubectl’s last-applied-configuration is never kept)'),
      seenAt: z.string().describe('The last poll that listed it'),
      goneAt: z.string().nullable().describe('When the runtime stopped listing it (its last known state is kept)'),
    })
    .describe('What the runtime says of this sandbox (CRI ListPodSandbox and PodSandboxStatus)'),
);

export type RecordedBody = z.infer<typeof recordedSchema>;
export type RuntimeStatusBody = z.infer<typeof runtimeStatusSchema>;
export type GcPlanBody = z.infer<typeof gcPlanSchema>;
export type GcPlanItemBody = z.infer<typeof gcPlanItemSchema>;
export type SandboxRuntime = z.infer<typeof sandboxRuntimeSchema>;
