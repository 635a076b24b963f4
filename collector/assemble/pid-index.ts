/**
 * Call ids by a pid (a call's plugin pid, or its parent's), so the questions
 * asked on every exec ("which published call had this plugin pid?", "which
 * top-level calls did this process start?") are a lookup, not a scan of every
 * call of the last minutes: at thousands of calls a second such a scan made
 * assembly quadratic. Ids go stale when their call is forgotten; a lookup
 * skips those it is told are gone.
 */
export class PidIndex {
  private readonly byPid = new Map<number, Set<string>>();

  add(pid: number, id: string): void {
    let ids = this.byPid.get(pid);
    if (!ids) {
      ids = new Set();
      this.byPid.set(pid, ids);
    }
    ids.add(id);
  }

  remove(pid: number, id: string): void {
    const ids = this.byPid.get(pid);
    if (!ids) return;
    ids.delete(id);
    if (ids.size === 0) this.byPid.delete(pid);
  }

  /** The ids under `pid` (a copy: the caller may remove while it looks). */
  get(pid: number): string[] {
    const ids = this.byPid.get(pid);
    return ids ? [...ids] : [];
  }
}
