/** The resolved look of one chart: concrete colors and a font that a canvas can use. */
export interface ChartTheme {
  /** Series colors in order; series beyond the list cycle through it. */
  palette: string[];
  /** The palette at area-fill opacity (stacked lines). */
  paletteFill: string[];
  text: string;
  /** Secondary text: axis ticks, the compare delta's label. */
  muted: string;
  grid: string;
  background: string;
  fontFamily: string;
  fontSize: number;
}

/** How many `--analytics-chart-color-N` properties the palette reads. */
export const PALETTE_SIZE = 8;

/**
 * Reads the theme from the computed style of an element inside the shadow root. A canvas cannot
 * resolve `var()`, so the custom properties (already cascaded through `:host`, the theme attribute
 * and the page's own rules) are read here and passed to Chart.js as plain values.
 */
export function resolveTheme(element: Element): ChartTheme {
  const style = getComputedStyle(element);
  const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  const palette: string[] = [];
  for (let i = 1; i <= PALETTE_SIZE; i++) {
    const color = style.getPropertyValue(`--_color-${i}`).trim();
    if (color) palette.push(color);
  }
  if (!palette.length) palette.push('#2563eb');
  const fontSize = Number.parseFloat(read('--_font-size', '12'));
  return {
    palette,
    paletteFill: palette.map((c) => withAlpha(c, 0.35)),
    text: read('--_text', '#1f2328'),
    muted: read('--_muted', '#59636e'),
    grid: read('--_grid', 'rgba(0, 0, 0, 0.1)'),
    background: read('--_background', '#ffffff'),
    fontFamily: read('--_font', style.fontFamily || 'sans-serif'),
    fontSize: Number.isFinite(fontSize) && fontSize > 0 ? fontSize : 12,
  };
}

const rgbaCache = new Map<string, [number, number, number, number]>();
let probe: CanvasRenderingContext2D | null | undefined;

/**
 * Any CSS color the canvas understands, with its alpha multiplied by `alpha`, as `rgba()`. The canvas
 * itself converts the color (named, hex, hsl, oklch…), so no color parser ships in the bundle.
 */
export function withAlpha(color: string, alpha: number): string {
  let rgba = rgbaCache.get(color);
  if (!rgba) {
    probe ??= document.createElement('canvas').getContext('2d', { willReadFrequently: true });
    if (!probe) return color;
    probe.clearRect(0, 0, 1, 1);
    probe.fillStyle = '#000';
    probe.fillStyle = color;
    probe.fillRect(0, 0, 1, 1);
    const [r = 0, g = 0, b = 0, a = 255] = probe.getImageData(0, 0, 1, 1).data;
    rgba = [r, g, b, a / 255];
    rgbaCache.set(color, rgba);
  }
  const [r, g, b, a] = rgba;
  return `rgba(${r}, ${g}, ${b}, ${Math.round(a * alpha * 1000) / 1000})`;
}
