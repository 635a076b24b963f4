/**
 * A call's kernel side for `cnirec show`: what it changed (grouped by
 * netns, refused ones first) and what the kernel said. Pure.
 */

import type { CallDetail } from '../api/index.js';
import { bold, dim, red } from './output.js';
import { safe } from './terminal-text.js';

type Change = NonNullable<CallDetail['changes']>[number];

const SIGN: Readonly<Record<Change['action'], string>> = { add: '+', delete: '-', change: '~' };

export function changesBlock(call: Pick<CallDetail, 'changes' | 'captureMode' | 'kernelMessages'>): string[] {
  const out: string[] = [];
  if (call.changes === null) {
    out.push(`${bold('changes')}  ${dim('(not captured: light capture)')}`);
  } else if (call.changes.length === 0) {
    out.push(`${bold('changes')}  ${dim('(none: the call changed nothing in the kernel)')}`);
  } else {
    const refused = call.changes.filter((c) => c.ok === false).length;
    out.push(`${bold('changes')}  ${dim(`${call.changes.length}${refused > 0 ? `, ${refused} refused` : ''}`)}`);
    const byNetns = new Map<string, Change[]>();
    for (const c of call.changes) byNetns.set(c.netns, [...(byNetns.get(c.netns) ?? []), c]);
    // Failures first: the netns with a refusal, and the refusals at the top of it.
    const groups = [...byNetns].sort(([, a], [, b]) => Number(b.some((c) => c.ok === false)) - Number(a.some((c) => c.ok === false)));
    for (const [netns, changes] of groups) {
      out.push(`  ${bold(safe(netns))}`);
      const ordered = [...changes.filter((c) => c.ok === false), ...changes.filter((c) => c.ok !== false)];
      for (const c of ordered) out.push(`    ${changeLine(c)}`);
    }
  }
  for (const m of call.kernelMessages) out.push(`${bold('kernel')}   ${safe(m.process)}[${m.pid}]: ${safe(m.message)}`);
  out.push('');
  return out;
}

function changeLine(c: Change): string {
  const text = `${SIGN[c.action]} ${c.object.padEnd(9)} ${safe(c.subject)}`;
  if (c.ok !== false) return c.ok === null ? `${text} ${dim('(no answer seen)')}` : text;
  const why = c.error ? `${safe(c.error.errno)}${c.error.message ? `: ${safe(c.error.message)}` : ''}` : 'refused';
  return red(`${text}  ✗ ${why}`);
}
