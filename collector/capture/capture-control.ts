/** The port through which the API and the live tail read and change the capture policy (daemon/capture-wiring.ts implements it). */

import type { CaptureMode } from '../../bpf/index.js';
import type { CaptureScope, CaptureSetting } from './capture-policy.js';

export interface CaptureStatus {
  /** The setting in force: an operator's while it lasts, else the configured one. */
  readonly setting: CaptureSetting;
  /** The configured setting (`--capture`), what `cnirec capture auto` or a lapsed window goes back to. */
  readonly configured: CaptureSetting;
  /** What the tracer should run now: `full` when payloads are being captured. */
  readonly mode: CaptureMode;
  readonly reason: string;
  /** When this lapses by itself (ISO 8601); null: it does not. */
  readonly until: string | null;
  /** While set, only these calls keep their payloads. */
  readonly scope: CaptureScope | null;
  /** The tracer is being switched to `mode`. */
  readonly switching: boolean;
  /** Why the last switch failed (retried); null when it worked. */
  readonly lastError: string | null;
}

export interface CaptureRequest {
  readonly setting: CaptureSetting;
  /** For how long (ms); null: until changed. */
  readonly forMs: number | null;
  readonly scope: CaptureScope | null;
}

export interface CaptureListener {
  onCaptureChanged(status: CaptureStatus): void;
}

export interface CaptureControl {
  status(): CaptureStatus;
  /** Applies an operator's request; resolves once the tracer runs the mode it implies. */
  request(req: CaptureRequest): Promise<CaptureStatus>;
  subscribe(listener: CaptureListener): () => void;
}
