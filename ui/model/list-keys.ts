/** Keyboard movement in a list: j/↓ next, k/↑ previous, Home/End; null for other keys. Pure. */
export function moveSelection(key: string, current: number, length: number): number | null {
  if (length === 0) return null;
  switch (key) {
    case 'j':
    case 'ArrowDown':
      return current < 0 ? 0 : Math.min(current + 1, length - 1);
    case 'k':
    case 'ArrowUp':
      return current < 0 ? 0 : Math.max(current - 1, 0);
    case 'Home':
      return 0;
    case 'End':
      return length - 1;
    default:
      return null;
  }
}
