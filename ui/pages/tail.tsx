/**
 * Live tail: calls as they start and finish, over the daemon's websocket tail, filtered like the CLI's.
 * Messages are buffered and folded in at most ten times a second, in an animation frame, into a capped
 * list, so a burst of hundreds of calls a second costs a few renders, not one per call.
 */

import { Component } from 'preact';
import { useLocation } from 'preact-iso';
import { useEffect, useRef, useState } from 'preact/hooks';
import { openTail } from '../client/client.js';
import type { TailServerMessage } from '../client/types.js';
import { CallTableHead, Duration, Outcome, ShortId, Time } from '../components/bits.js';
import { CALL_FILTER_SPECS, FilterForm } from '../components/filter-form.js';
import { useListKeys } from '../components/hooks.js';
import { formatMs, podText } from '../model/format.js';
import { callPath, filterFromQuery, queryString, TAIL_FIELDS } from '../model/query.js';
import { applyTailMessages, EMPTY_TAIL, runningCount, type TailList, type TailRow } from '../model/tail-list.js';

/** Messages held while paused, at most (the oldest go; the list is capped anyway). */
const MAX_PENDING = 5000;
const RECONNECT_MS = 2000;
/** Rows kept on screen: enough to read back a burst, few enough to stay cheap to draw (older ones: the Calls page). */
const TAIL_ROWS = 200;
/** Redraws a second at most: 10 keep the tail live to the eye and leave the browser time to paint. */
const FLUSH_EVERY_MS = 100;

type Connection = { state: 'connecting' | 'live' | 'closed'; message?: string };

export function TailPage() {
  const { query, route } = useLocation();
  const filter = filterFromQuery(TAIL_FIELDS, query);
  const qs = queryString(TAIL_FIELDS, filter);
  const [list, setList] = useState<TailList>(EMPTY_TAIL);
  const [paused, setPaused] = useState(false);
  const [connection, setConnection] = useState<Connection>({ state: 'connecting' });
  const [now, setNow] = useState(Date.now());
  const pending = useRef<TailServerMessage[]>([]);
  /** The next redraw: its timer, then its animation frame (0: none pending). */
  const timer = useRef(0);
  const frame = useRef(0);
  const lastFlush = useRef(0);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;

  const flush = () => {
    frame.current = 0;
    if (pausedRef.current || pending.current.length === 0) return;
    lastFlush.current = performance.now();
    const batch = pending.current;
    pending.current = [];
    setList((l) => applyTailMessages(l, batch, TAIL_ROWS));
  };
  // At most one redraw per FLUSH_EVERY_MS, in an animation frame: under a burst each redraw takes many calls at once.
  const schedule = () => {
    if (timer.current !== 0 || frame.current !== 0) return;
    const wait = Math.max(0, lastFlush.current + FLUSH_EVERY_MS - performance.now());
    timer.current = window.setTimeout(() => {
      timer.current = 0;
      frame.current = requestAnimationFrame(flush);
    }, wait);
  };

  useEffect(() => {
    setList(EMPTY_TAIL);
    pending.current = [];
    let socket: WebSocket | null = null;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const connect = () => {
      setConnection({ state: 'connecting' });
      socket = openTail(qs);
      socket.onmessage = (event) => {
        let message: TailServerMessage;
        try {
          message = JSON.parse(String(event.data)) as TailServerMessage;
        } catch {
          return;
        }
        if (message.type === 'hello') setConnection({ state: 'live' });
        else if (message.type === 'error') setConnection({ state: 'closed', message: message.error.message });
        else {
          pending.current.push(message);
          if (pending.current.length > MAX_PENDING) pending.current.splice(0, pending.current.length - MAX_PENDING);
          schedule();
        }
      };
      socket.onclose = (event) => {
        if (stopped) return;
        // 4400: the filter was refused; reconnecting would be refused again.
        if (event.code === 4400) return setConnection((c) => ({ state: 'closed', message: c.message ?? event.reason }));
        setConnection((c) => ({ state: 'closed', message: c.message ?? 'The tail closed; reconnecting…' }));
        retry = setTimeout(connect, RECONNECT_MS);
      };
    };
    connect();
    return () => {
      stopped = true;
      clearTimeout(retry);
      clearTimeout(timer.current);
      cancelAnimationFrame(frame.current);
      timer.current = 0;
      frame.current = 0;
      socket?.close(1000);
    };
  }, [qs]);

  useEffect(() => {
    if (!paused) schedule();
  }, [paused]);

  const running = runningCount(list);
  useEffect(() => {
    if (running === 0) return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [running > 0]);

  const open = (i: number) => {
    const row = list.rows[i];
    if (row?.kind === 'call') route(callPath(row.call.id));
  };
  const selected = useListKeys(list.rows.length, open);

  return (
    <div class="page tail-page">
      <h1>Live tail</h1>
      <FilterForm
        path="/ui/tail"
        fields={TAIL_FIELDS}
        value={filter}
        specs={CALL_FILTER_SPECS}
      >
        <button type="button" onClick={() => setPaused(!paused)} aria-pressed={paused}>
          {paused ? 'Resume' : 'Pause'}
        </button>
      </FilterForm>
      <p class="tail-status" data-state={connection.state}>
        <span class={`dot ${connection.state}`} /> {connection.state === 'live' ? 'live' : connection.state}
        {connection.message ? `: ${connection.message}` : ''} · {list.received} calls · {running} running
        {paused ? ` · paused (${pending.current.length} waiting)` : ''}
        {list.dropped > 0 ? ` · older rows dropped from view: ${list.dropped}` : ''}
      </p>
      <table class="list tail-list">
        <colgroup>
          <col class="c-time" />
          <col class="c-cmd" />
          <col class="c-plugin" />
          <col class="c-pod" />
          <col class="c-ctr" />
          <col class="c-dur" />
          <col class="c-out" />
          <col />
        </colgroup>
        <CallTableHead />
        <tbody>
          {list.rows.map((row, i) => (
            <TailLine key={row.key} row={row} index={i} selected={i === selected} now={row.kind === 'call' && row.call.status === 'running' ? now : 0} />
          ))}
        </tbody>
      </table>
      {list.rows.length === 0 && <p class="muted">Waiting for calls…</p>}
    </div>
  );
}

interface LineProps {
  row: TailRow;
  index: number;
  selected: boolean;
  /** The clock, for a running call's time so far; 0 for the others (they never tick). */
  now: number;
}

/** One row; redrawn only when its call, selection or (while running) the clock changes. */
class TailLine extends Component<LineProps> {
  override shouldComponentUpdate(next: LineProps) {
    const p = this.props;
    return next.row !== p.row || next.selected !== p.selected || next.now !== p.now || next.index !== p.index;
  }

  override render({ row, index, selected, now }: LineProps) {
    if (row.kind === 'gap') {
      const g = row.gap;
      return (
        <tr class="gap-row" data-row={index}>
          <td>
            <Time iso={g.startedAt} clock />
          </td>
          <td colSpan={7}>
            Tracer gap: {g.reason}
            {g.endedAt ? ` · recording again after ${formatMs(g.durationMs)}` : ' · not recording'}
            {g.incompleteCalls > 0 ? ` · ${g.incompleteCalls} calls in flight marked incomplete` : ''}
          </td>
        </tr>
      );
    }
    const c = row.call;
    const failed = c.ok === false || c.status === 'incomplete';
    return (
      <tr class={`call-row${failed ? ' failed' : ''}${selected ? ' selected' : ''}`} data-row={index} data-call-id={c.id}>
        <td>
          <Time iso={c.startedAt} clock />
        </td>
        <td>{c.command ?? '—'}</td>
        <td>
          <a href={callPath(c.id)}>{c.plugin}</a>
          {c.parentId ? <span class="muted"> (delegated)</span> : null}
        </td>
        <td>{podText(c.pod)}</td>
        <td>
          <ShortId id={c.containerId} />
        </td>
        <td>{c.status === 'running' ? <span class="num running">{formatMs(Math.max(0, now - Date.parse(c.startedAt)))}…</span> : <Duration ms={c.durationMs} />}</td>
        <td>
          <Outcome run={c} />
        </td>
        <td class="error-cell">{c.error ?? c.incompleteReason ?? ''}</td>
      </tr>
    );
  }
}
