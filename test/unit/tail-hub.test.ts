// The hub fans collector events out to subscribers: converted and encoded
// once, delivered only where the filter matches, and never stopped by one
// subscriber's failure.
import { describe, expect, it } from 'vitest';
import type { CallSummary } from '../../api/schemas/call-summary.js';
import type { TailFilter } from '../../api/tail/tail-filter.js';
import { createTailHub, type TailSubscriber } from '../../api/tail/tail-hub.js';
import type { CallEventType } from '../../api/tail/tail-messages.js';
import { stream } from '../integration/harness.js';
import { finished, makeCall, started, updated } from '../integration/tail-harness.js';

interface Delivery {
  readonly type: CallEventType;
  readonly call: CallSummary;
  readonly frame: Buffer;
}

function subscriber(filter: TailFilter = {}): TailSubscriber & { got: Delivery[] } {
  const got: Delivery[] = [];
  return { filter, got, deliver: (type, call, frame) => got.push({ type, call, frame }) };
}

describe('the tail hub', () => {
  it('delivers each event to the subscribers whose filter matches, as a summary and a JSON frame', () => {
    const hub = createTailHub();
    const all = subscriber();
    const web1 = subscriber({ pod: 'web-1' });
    hub.add(all);
    hub.add(web1);
    const call = makeCall({ podName: 'web-0', exit: 3 });
    hub.onEvents([started(call), finished(call)]);

    expect(all.got.map((d) => d.type)).toEqual(['call.started', 'call.finished']);
    expect(web1.got).toEqual([]);
    const frame = JSON.parse(all.got[1]?.frame.toString() ?? '');
    expect(frame).toEqual({ type: 'call.finished', call: all.got[1]?.call });
    expect(frame.call).toMatchObject({ id: call.id, exitCode: 3, ok: false });
  });

  it('sends a call changed after its finish as call.updated, with what came after the plugin exited, filtered like the others', () => {
    const hub = createTailHub();
    const all = subscriber();
    const other = subscriber({ pod: 'web-1' });
    hub.add(all);
    hub.add(other);
    const call = makeCall({ podName: 'web-0' });
    const late = { ...call, stderr: stream('late\n'), stderrAfterExitOffset: 0 };
    hub.onEvents([started(call), finished(call)]);
    hub.onEvents([updated(late)]);

    expect(all.got.map((d) => d.type)).toEqual(['call.started', 'call.finished', 'call.updated']);
    expect(other.got).toEqual([]);
    const frame = JSON.parse(all.got[2]!.frame.toString());
    expect(frame.type).toBe('call.updated');
    expect(frame.call).toMatchObject({ id: call.id, status: 'finished', outputAfterExit: { stdout: null, stderr: 0 }, payload: { stderr: { bytes: 5 } } });
  });

  it('shares one summary and one frame per event among all subscribers', () => {
    const hub = createTailHub();
    const a = subscriber();
    const b = subscriber({ namespace: 'demo' });
    hub.add(a);
    hub.add(b);
    hub.onEvents([finished(makeCall())]);
    expect(b.got[0]?.frame).toBe(a.got[0]?.frame);
    expect(b.got[0]?.call).toBe(a.got[0]?.call);
  });

  it('reads a subscriber’s filter at every event, so a change applies at once', () => {
    const hub = createTailHub();
    const s = subscriber({ pod: 'nobody' });
    hub.add(s);
    hub.onEvents([finished(makeCall())]);
    (s as { filter: TailFilter }).filter = {};
    hub.onEvents([finished(makeCall())]);
    expect(s.got).toHaveLength(1);
  });

  it('keeps delivering to the others when one subscriber throws, and reports the error', () => {
    const errors: unknown[] = [];
    const hub = createTailHub({ onSubscriberError: (err) => errors.push(err) });
    hub.add({
      filter: {},
      deliver: () => {
        throw new Error('socket exploded');
      },
    });
    const ok = subscriber();
    hub.add(ok);
    hub.onEvents([finished(makeCall()), finished(makeCall())]);
    expect(ok.got).toHaveLength(2);
    expect(errors).toHaveLength(2);
  });

  it('stops delivering to a subscriber once removed, and counts clients and drops', () => {
    const hub = createTailHub();
    const s = subscriber();
    const remove = hub.add(s);
    hub.add(subscriber());
    expect(hub.stats()).toEqual({ clients: 2, droppedClients: 0, droppedMessages: 0 });
    remove();
    hub.recordDrop(17);
    hub.onEvents([finished(makeCall())]);
    expect(s.got).toEqual([]);
    expect(hub.stats()).toEqual({ clients: 1, droppedClients: 1, droppedMessages: 17 });
  });
});
