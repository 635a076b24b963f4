/**
 * The REST benchmark's HTTP/1.1 client: one kept-alive connection that
 * reads every answer into buffers it reuses. node:http gives each socket
 * read a Buffer of its own; at ~550 KiB per pod story those made V8 run a
 * mark-compact every ~100-150 ms ("external memory pressure"), and its
 * 1-10 ms pauses landed inside the timed requests (bench/README.md, "Busy
 * pod story"). Here a read lands in one fixed buffer (`onread`), the body
 * is copied into one that only grows, and nothing is allocated per answer
 * unless its body is read.
 *
 * Enough HTTP for the daemon's REST answers and no more: one request at a
 * time, answers with a Content-Length (every route but the websocket tail
 * sends one). Anything else is an error that says so.
 */

import net from 'node:net';

const READ_BUFFER_BYTES = 1 << 20;
const HEAD_END = '\r\n\r\n';
/** A head longer than this is not an answer from the daemon. */
const MAX_HEAD_CHARS = 64 * 1024;

export interface HttpAnswer {
  readonly status: number;
  readonly bytes: number;
  /** The body as text; valid until the connection's next request. */
  text(): string;
}

interface Pending {
  resolve(a: HttpAnswer): void;
  reject(err: Error): void;
}

export class HttpReader {
  private readonly socket: net.Socket;
  private pending: Pending | null = null;
  private head = '';
  private status = 0;
  /** Body bytes the answer announced; -1 while its head is being read. */
  private length = -1;
  private received = 0;
  private body = Buffer.alloc(READ_BUFFER_BYTES);
  private closing = false;
  private readonly readBuffer = Buffer.alloc(READ_BUFFER_BYTES);

  private constructor(host: string, port: number) {
    this.socket = net.connect({ host, port, noDelay: true, onread: { buffer: this.readBuffer, callback: (n) => this.onRead(n) } });
    const fail = (err: Error) => this.takePending()?.reject(err);
    this.socket.on('error', fail);
    this.socket.on('close', () => {
      this.closing = true;
      fail(new Error('the daemon closed the connection'));
    });
  }

  /** Connects to `base` (http://host:port). */
  static async open(base: string): Promise<HttpReader> {
    const url = new URL(base);
    const r = new HttpReader(url.hostname, Number(url.port));
    await new Promise<void>((resolve, reject) => {
      r.socket.once('connect', resolve);
      r.socket.once('error', reject);
    });
    return r;
  }

  get alive(): boolean {
    return !this.closing;
  }

  /** GET `pathAndQuery`; resolves after the answer's last byte. */
  get(pathAndQuery: string): Promise<HttpAnswer> {
    if (this.pending !== null) return Promise.reject(new Error('one request at a time per HttpReader'));
    if (this.closing) return Promise.reject(new Error('the connection is closed'));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket.write(`GET ${pathAndQuery} HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n\r\n`);
    });
  }

  close(): void {
    this.closing = true;
    this.socket.destroy();
  }

  private onRead(n: number): boolean {
    const buf = this.readBuffer;
    let at = 0;
    if (this.length < 0) {
      // Heads are small and ASCII: read as latin1, a byte is a character, so offsets agree. Only the head is
      // turned into a string (a body can be megabytes), also when it came in pieces.
      let end: number;
      let text: string;
      if (this.head === '') {
        end = buf.subarray(0, n).indexOf(HEAD_END);
        text = buf.toString('latin1', 0, end < 0 ? Math.min(n, MAX_HEAD_CHARS + 1) : end);
      } else {
        text = this.head + buf.toString('latin1', 0, Math.min(n, MAX_HEAD_CHARS + 1));
        end = text.indexOf(HEAD_END);
      }
      if (end < 0) {
        this.head = text;
        if (this.head.length > MAX_HEAD_CHARS) this.abort(new Error(`an answer head longer than ${MAX_HEAD_CHARS} characters`));
        return true;
      }
      const parsed = parseHead(text.slice(0, end));
      if (parsed instanceof Error) {
        this.abort(parsed);
        return true;
      }
      at = end + HEAD_END.length - this.head.length;
      this.head = '';
      this.status = parsed.status;
      this.length = parsed.length;
      this.received = 0;
      if (this.body.length < this.length) this.body = Buffer.alloc(this.length);
    }
    const take = Math.min(n - at, this.length - this.received);
    buf.copy(this.body, this.received, at, at + take);
    this.received += take;
    if (at + take < n) {
      this.abort(new Error('bytes past the end of an answer (the daemon does not pipeline)'));
      return true;
    }
    if (this.received === this.length) this.finish();
    return true;
  }

  private takePending(): Pending | null {
    const p = this.pending;
    this.pending = null;
    return p;
  }

  private finish(): void {
    const { status, length, body } = this;
    this.length = -1;
    this.takePending()?.resolve({ status, bytes: length, text: () => body.toString('utf8', 0, length) });
  }

  private abort(err: Error): void {
    const p = this.takePending();
    this.close();
    p?.reject(err);
  }
}

function parseHead(head: string): { status: number; length: number } | Error {
  const lines = head.split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!status) return new Error(`not an HTTP/1.1 answer: ${JSON.stringify(lines[0])}`);
  let length: number | null = null;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-length') length = Number(value);
    if (name === 'transfer-encoding') return new Error(`a ${value} answer: the benchmark's reader takes Content-Length answers only`);
  }
  const code = Number(status[1]);
  // These never have a body (RFC 9112, 6.3).
  if (code === 204 || code === 304 || code < 200) return { status: code, length: 0 };
  if (length === null || !Number.isSafeInteger(length) || length < 0) return new Error('an answer without a usable Content-Length');
  return { status: code, length };
}
