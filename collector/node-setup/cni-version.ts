/** CNI spec versions ("0.3.1", "1.0.0") compared as numbers, not as text ("0.10.0" > "0.4.0"). */

export function isVersion(v: string): boolean {
  return /^\d+\.\d+\.\d+$/.test(v);
}

export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
