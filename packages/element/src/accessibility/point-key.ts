/**
 * Where a key moves the keyboard's active point among `count` points, from `current` (-1 when
 * none is active): arrows step and stop at the ends, Home and End jump. `clear` for Escape;
 * undefined for keys the chart leaves to the page.
 */
export function pointIndexForKey(
  key: string,
  current: number,
  count: number,
): number | 'clear' | undefined {
  switch (key) {
    case 'ArrowRight':
    case 'ArrowDown':
      return Math.min(count - 1, current + 1);
    case 'ArrowLeft':
    case 'ArrowUp':
      return Math.max(0, current - 1);
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    case 'Escape':
      return 'clear';
    default:
      return undefined;
  }
}
