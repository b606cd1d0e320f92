/**
 * A one-line progress bar on a terminal (stderr), redrawn at most ten times a second. On
 * anything that is not a TTY it prints nothing, so logs and pipes stay clean.
 */
export class ProgressBar {
  readonly #stream: NodeJS.WriteStream;
  readonly #enabled: boolean;
  #last = 0;
  #drawn = false;

  constructor(stream: NodeJS.WriteStream = process.stderr) {
    this.#stream = stream;
    this.#enabled = stream.isTTY === true;
  }

  /** Shows `fraction` (0…1) done, with a short note such as a count and a rate. */
  update(fraction: number, note: string): void {
    if (!this.#enabled) return;
    const now = Date.now();
    if (now - this.#last < 100 && fraction < 1) return;
    this.#last = now;
    const width = 30;
    const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
    const percent = `${Math.floor(fraction * 100)}`.padStart(3);
    this.#stream.write(
      `\r[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${percent}% ${note}\u001b[K`,
    );
    this.#drawn = true;
  }

  /** Removes the bar so the next output starts on a clean line. */
  clear(): void {
    if (this.#enabled && this.#drawn) this.#stream.write('\r\u001b[K');
    this.#drawn = false;
  }
}
