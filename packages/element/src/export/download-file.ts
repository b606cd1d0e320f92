/** A file name from the chart's title (`Sign-ups per day` → `sign-ups-per-day`), or `chart`. */
export function exportFileName(title: string | undefined): string {
  const slug = (title ?? '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60);
  return slug || 'chart';
}

/**
 * Downloads `href` as `fileName` through a hidden link clicked inside `root`, so nothing is
 * added to the host page and nothing outlives the click.
 */
export function downloadFile(root: Node, fileName: string, href: string): void {
  const link = document.createElement('a');
  link.download = fileName;
  link.href = href;
  link.hidden = true;
  root.appendChild(link);
  link.click();
  link.remove();
}
