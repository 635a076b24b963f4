/** `cnirec gc`'s human output: the plan, each item's outcome once applied, and what was not judged. Pure. */

import type { GcPlanItemBody } from '../api/index.js';
import type { GcOutcome } from './gc-apply.js';
import { bold, dim, green, padEnd, red, yellow } from './output.js';
import { ageOf } from './time-text.js';

export interface GcReport {
  readonly runtime: string;
  readonly sandboxes: number;
  readonly items: readonly (GcPlanItemBody & { readonly outcome?: GcOutcome })[];
  readonly applied: boolean;
  readonly tooYoung: number;
  readonly notRuntime: number;
  readonly minAge: string;
  readonly problems: readonly string[];
}

function outcomeLine(o: GcOutcome): string {
  switch (o.result) {
    case 'freed':
      return green(
        `freed: DEL ${o.plugins.join(', ')} succeeded, cache entry removed${o.reservationsLeft.length > 0 ? `; host-local still holds ${o.reservationsLeft.join(', ')}` : ', reservation released'}`,
      );
    case 'failed':
      return red(`failed${o.plugin ? ` (${o.plugin})` : ''}: ${o.error}`);
    case 'skipped':
      return yellow(`skipped: ${o.why}`);
    case 'not-run':
      return dim(`not run: ${o.why}`);
  }
}

export function formatGc(r: GcReport, nowMs: number): string[] {
  const out = [bold(`cnirec gc: what a CNI GC would free on this node`) + dim(`  (${r.runtime}: ${r.sandboxes} sandbox${r.sandboxes === 1 ? '' : 'es'} listed)`)];
  for (const p of r.problems) out.push(yellow(`warning: ${p}`));
  out.push('');
  if (r.items.length === 0) out.push(green('nothing to free: the runtime lists the sandbox of every attachment it made'));
  else {
    out.push(bold([padEnd('CONTAINER', 13), padEnd('NETWORK', 16), padEnd('IFNAME', 7), padEnd('ADDRESSES', 26), padEnd('POD', 28), 'ATTACHED'].join('  ')));
    for (const i of r.items) {
      out.push(
        [
          padEnd(i.containerId.slice(0, 12), 13),
          padEnd(i.network ?? '?', 16),
          padEnd(i.ifName ?? '?', 7),
          padEnd(i.addresses.join(',') || '-', 26),
          padEnd(i.pod ? `${i.pod.namespace}/${i.pod.name}` : '-', 28),
          `${ageOf(i.attachedAt, nowMs)} ago`,
        ].join('  '),
      );
      out.push(dim(`  ${[i.cachePath ? `cache ${i.cachePath}` : null, ...i.reservationPaths.map((p) => `reservation ${p}`), i.netns ? `netns ${i.netns}` : null].filter(Boolean).join(', ')}`));
      if (!i.freeable) out.push(yellow(`  cannot be freed by a DEL: ${i.why ?? '?'}`));
      // Older libcni (Debian's containerd 1.6 among them) cached no netns: plugins then only release the addresses.
      else if (i.netns === null) out.push(dim("  libcni cached no netns for it: its DEL releases the addresses, but interfaces left in the pod's netns stay until that netns is removed"));
      if (i.outcome) out.push(`  ${outcomeLine(i.outcome)}`);
    }
  }
  out.push('');
  const freeable = r.items.filter((i) => i.freeable).length;
  if (r.applied) {
    const n = (k: GcOutcome['result']) => r.items.filter((i) => i.outcome?.result === k).length;
    out.push(`${r.items.length} leaked attachment${r.items.length === 1 ? '' : 's'}: ${n('freed')} freed, ${n('failed')} failed, ${n('skipped')} skipped, ${n('not-run')} not run`);
  } else if (r.items.length > 0) {
    out.push(`${r.items.length} leaked attachment${r.items.length === 1 ? '' : 's'}, ${freeable} of them freeable: dry run, nothing was freed (cnirec gc --apply runs their DELs, one at a time)`);
  }
  const notJudged = [
    r.tooYoung > 0 ? `${r.tooYoung} younger than ${r.minAge} (--min-age: a sandbox may still be being made)` : null,
    r.notRuntime > 0 ? `${r.notRuntime} whose args name no pod (not a kubelet's runtime's: podman, cnitool…): the CRI cannot say` : null,
  ].filter(Boolean);
  if (notJudged.length > 0) out.push(dim(`not judged: ${notJudged.join('; ')}`));
  return out;
}
