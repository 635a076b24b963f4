// A call as the CLI receives it from the API, for the formatting tests.
import type { CallSummaryView } from '../../cli/api-client.js';

export const callView = (over: Partial<CallSummaryView> & Record<string, unknown> = {}): CallSummaryView =>
  ({
    id: 'a1',
    command: 'ADD',
    plugin: 'bridge',
    pid: 1,
    parentId: null,
    parentProcess: null,
    containerId: 'c0ffee0123456789',
    netns: null,
    ifname: 'eth0',
    pod: { namespace: 'shop', name: 'cart-0', uid: 'u1' },
    startedAt: '2026-11-21T18:33:20.104Z',
    endedAt: '2026-11-21T18:33:20.144Z',
    durationMs: 40.5,
    exitCode: 0,
    signal: null,
    ok: true,
    status: 'finished',
    incompleteReason: null,
    isVersionProbe: false,
    ...over,
  }) as CallSummaryView;
