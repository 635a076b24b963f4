import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CniCall } from '../../collector/types.js';
import { createFindingsReader, type FindingsReader } from '../../store/findings/findings-reader.js';
import { createCallLoopDetector, type CallLoopDetector } from '../../store/findings/call-loops.js';
import { delegatedIpam, finished, makeCall, stream, T0_MS } from './api-harness.js';
import { tempStore, type TempStore } from './harness.js';

const SEC_US = 1_000_000;
const DEL_ERROR = '{"cniVersion":"1.0.0","code":999,"msg":"failed to delete veth: device or resource busy"}';

describe('DEL and ADD loop findings', () => {
  let t: TempStore;
  let detector: CallLoopDetector;
  let findings: FindingsReader;
  const write = (...calls: CniCall[]) => t.store.writeEvents(calls.map(finished));
  const failedDel = (atSec: number, over: Parameters<typeof makeCall>[0] = {}) =>
    makeCall({ at: atSec * SEC_US, command: 'DEL', exit: 1, stdout: stream(DEL_ERROR), containerId: 'sandbox-a', ...over });
  const open = (kind: 'del-loop' | 'add-loop') => findings.listFindings({ kind, includeResolved: false });
  const all = (kind: 'del-loop' | 'add-loop') => findings.listFindings({ kind, includeResolved: true });
  // A minute after the first call: well inside the default hour.
  const NOW = T0_MS + 600_000;

  beforeEach(() => {
    t = tempStore('cnirec-call-loops-');
    detector = createCallLoopDetector(t.db);
    findings = createFindingsReader(t.db);
  });
  afterEach(() => t.remove());

  it('opens a del-loop after three failed DELs of one interface, naming the pod, the count and the plugin error', () => {
    write(failedDel(0), failedDel(10));
    detector.detect(NOW);
    expect(open('del-loop')).toEqual([]);

    const third = failedDel(20);
    write(third);
    detector.detect(NOW);
    const [f] = open('del-loop');
    expect(f).toMatchObject({ kind: 'del-loop', containerId: 'sandbox-a', callId: third.id, resolvedAtMs: null });
    expect(f!.message).toContain('DEL of container sandbox-a (eth0) for pod demo/web-0 failed 3 times since');
    expect(f!.message).toContain('bridge exited 1: failed to delete veth: device or resource busy');

    // Still failing: the same finding, its count and last call brought up to date.
    const fourth = failedDel(30, { killedBy: 9, stdout: stream() });
    write(fourth);
    detector.detect(NOW + 5_000);
    const [again] = open('del-loop');
    expect(again!.id).toBe(f!.id);
    expect(again!.message).toContain('failed 4 times');
    expect(again!.message).toContain(`call ${fourth.id}, bridge killed by signal 9`);
    expect(again!.lastSeenMs).toBe(NOW + 5_000);
  });

  it('resolves a del-loop once a DEL of that interface succeeds', () => {
    write(failedDel(0), failedDel(10), failedDel(20));
    detector.detect(NOW);
    expect(open('del-loop')).toHaveLength(1);
    write(makeCall({ at: 30 * SEC_US, command: 'DEL', containerId: 'sandbox-a' }));
    detector.detect(NOW + 1_000);
    expect(open('del-loop')).toEqual([]);
    expect(all('del-loop')[0]).toMatchObject({ resolvedAtMs: NOW + 1_000 });
  });

  it('counts failures of one interface only after its last successful DEL, and only top-level ones', () => {
    const del = failedDel(10);
    write(
      failedDel(0),
      makeCall({ at: 5 * SEC_US, command: 'DEL', containerId: 'sandbox-a' }),
      del,
      // bridge's own host-local DEL failing under it is part of bridge's failure, not a retry.
      delegatedIpam(del, { exit: 1, containerId: 'sandbox-a' }),
      failedDel(20),
      // Another container, another interface: loops of their own.
      failedDel(21, { containerId: 'sandbox-b' }),
      failedDel(22, { ifname: 'net1' }),
    );
    detector.detect(NOW);
    expect(open('del-loop')).toEqual([]);
  });

  it('forgets failures older than the window: the loop ended (the pod is gone or the runtime gave up)', () => {
    write(failedDel(0), failedDel(10), failedDel(20));
    detector.detect(NOW);
    expect(open('del-loop')).toHaveLength(1);
    detector.detect(T0_MS + 20_000 + 60 * 60_000 + 1);
    expect(open('del-loop')).toEqual([]);
  });

  it('opens an add-loop for a pod whose ADD keeps failing, a new sandbox each time, and resolves it when one succeeds', () => {
    const add = (atSec: number, containerId: string, exit: number) => makeCall({ at: atSec * SEC_US, containerId, exit, podName: 'api-7d9f', podUid: 'uid-1' });
    write(add(0, 'sb-1', 1), add(15, 'sb-2', 1), add(40, 'sb-3', 1));
    detector.detect(NOW);
    const [f] = open('add-loop');
    expect(f).toMatchObject({ kind: 'add-loop', containerId: 'sb-3' });
    expect(f!.message).toContain('ADD for pod demo/api-7d9f (eth0) failed 3 times');
    expect(f!.message).toContain('ContainerCreating');
    expect(f!.message).toContain('no IP addresses available in range set');

    write(add(80, 'sb-4', 0));
    detector.detect(NOW + 1_000);
    expect(open('add-loop')).toEqual([]);
  });

  it('keeps pods of one reused name apart by UID, and ignores VERSION probes and calls without a pod', () => {
    write(
      makeCall({ at: 0, containerId: 'sb-1', exit: 1, podName: 'web-0', podUid: 'uid-old' }),
      makeCall({ at: 10 * SEC_US, containerId: 'sb-2', exit: 1, podName: 'web-0', podUid: 'uid-old' }),
      makeCall({ at: 20 * SEC_US, containerId: 'sb-3', exit: 1, podName: 'web-0', podUid: 'uid-new' }),
      makeCall({ at: 30 * SEC_US, exit: 1, noPod: true, containerId: 'x' }),
      makeCall({ at: 31 * SEC_US, exit: 1, noPod: true, containerId: 'y' }),
      makeCall({ at: 32 * SEC_US, exit: 1, noPod: true, containerId: 'z' }),
    );
    detector.detect(NOW);
    expect(open('add-loop')).toEqual([]);
  });
});
