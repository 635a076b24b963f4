/** The store's microseconds since the epoch → OpenTelemetry's [seconds, nanoseconds], exactly. */

import type { HrTime } from '@opentelemetry/api';

export function hrTimeOfUs(us: number): HrTime {
  const whole = Math.floor(us);
  const seconds = Math.floor(whole / 1_000_000);
  return [seconds, (whole - seconds * 1_000_000) * 1000];
}

export function hrDurationUs(startUs: number, endUs: number): HrTime {
  return hrTimeOfUs(Math.max(0, endUs - startUs));
}
