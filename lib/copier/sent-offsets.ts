/**
 * The source offset of every record sent to one destination partition, by its place among the records the
 * producer accepted there (a delivery failure names its records by that place). Kept as runs of consecutive
 * offsets, which is what a source partition mostly is: a few numbers per commit interval, not one per record.
 */
export class SentOffsets {
  private runs: Array<{ index: number; offset: number; length: number }> = []
  private sent = 0

  push(offset: number): void {
    const last = this.runs[this.runs.length - 1]
    if (last !== undefined && last.offset + last.length === offset) last.length++
    else this.runs.push({ index: this.sent, offset, length: 1 })
    this.sent++
  }

  /** The source offset of the record sent `index`-th, if it was sent since the last `forget()`. */
  offsetOf(index: number): number | undefined {
    const run = this.runs.find((r) => index >= r.index && index < r.index + r.length)
    return run === undefined ? undefined : run.offset + index - run.index
  }

  /** Drops what was sent so far (every copy of it was acknowledged or reported); the count goes on. */
  forget(): void {
    this.runs = []
  }
}
