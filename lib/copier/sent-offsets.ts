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

  /** How many records were sent here so far: a mark for forget(). */
  get count(): number {
    return this.sent
  }

  /** Drops the records sent before the `before`-th (every copy of them was acknowledged or reported); the count goes on. */
  forget(before: number = this.sent): void {
    const kept = this.runs.filter((r) => r.index + r.length > before)
    const first = kept[0]
    if (first !== undefined && first.index < before)
      kept[0] = {
        index: before,
        offset: first.offset + before - first.index,
        length: first.index + first.length - before
      }
    this.runs = kept
  }
}
