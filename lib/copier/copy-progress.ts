import type { PartitionRange } from './source-range.js'

/**
 * Where the copy stands per source partition: which partitions this copier owns, the next offset to copy in
 * each (what a commit would record), and the group's committed offsets as this copier last committed or saw them.
 */
export class CopyProgress {
  /** Next offset to copy per source partition this copier owns. */
  private readonly processed = new Map<number, number>()
  /** The group's committed offset per partition, as this copier last committed or fetched it. */
  private readonly committed = new Map<number, number>()
  /** Where each source partition started and ended when the copy started. */
  private range = new Map<number, PartitionRange>()
  /** The source partitions the group assigned to this copier. */
  private readonly owned = new Set<number>()

  setRange(range: Map<number, PartitionRange>): void {
    this.range = range
  }

  owns(partition: number): boolean {
    return this.owned.has(partition)
  }

  /** The partitions owned now, in the order they were taken. */
  ownedPartitions(): number[] {
    return [...this.owned]
  }

  /** Per source partition, the next offset not copied: the end of the source range the copy read. */
  copiedUpTo(): ReadonlyMap<number, number> {
    return new Map([...this.committed, ...this.processed])
  }

  /** Takes a partition at the group's committed offset (null: none yet); returns where its copy starts. */
  take(partition: number, committed: number | null): number {
    if (committed !== null) this.committed.set(partition, committed)
    else this.committed.delete(partition)
    const start = committed ?? this.range.get(partition)?.low ?? 0
    this.processed.set(partition, start)
    this.owned.add(partition)
    return start
  }

  /** The next offset to copy in `partition`. */
  next(partition: number): number {
    return this.processed.get(partition) ?? 0
  }

  /** Records up to `next` (exclusive) are copied. */
  copiedTo(partition: number, next: number): void {
    this.processed.set(partition, next)
  }

  /**
   * Past the whole batch: its marker, offsets compaction removed, or an aborted transaction are not copied again
   * nor waited for.
   */
  passed(partition: number, lastOffset: number): void {
    // Revoked meanwhile: the partition's offsets are its next owner's to commit.
    if (!this.owned.has(partition)) return
    this.processed.set(partition, Math.max(this.processed.get(partition) ?? 0, lastOffset + 1))
  }

  drop(partitions: readonly number[]): void {
    for (const partition of partitions) {
      this.owned.delete(partition)
      this.processed.delete(partition)
    }
  }

  /** Whether every source partition, owned or not, reached the end it had when the copy started. */
  reachedEnd(): boolean {
    for (const [partition, { high }] of this.range) {
      if ((this.processed.get(partition) ?? this.committed.get(partition) ?? 0) < high) return false
    }
    return true
  }

  /** Whether every partition this copier owns reached the end it had when the copy started. */
  ownDone(): boolean {
    return [...this.owned].every((p) => (this.processed.get(p) ?? 0) >= (this.range.get(p)?.high ?? 0))
  }

  /** The source partitions other copiers own (or nobody does). */
  notOwned(): number[] {
    return [...this.range.keys()].filter((p) => !this.owned.has(p))
  }

  /** Another copier committed `offset` for `partition`: it counts towards the end unless this copier owns it now. */
  committedElsewhere(partition: number, offset: number): void {
    if (!this.owned.has(partition)) this.committed.set(partition, offset)
  }

  /** Per source partition, the offset copied up to where it differs from the last commit's. */
  uncommitted(): Array<[number, number]> {
    return [...this.processed].filter(([partition, offset]) => this.committed.get(partition) !== offset)
  }

  recordCommit(offsets: ReadonlyArray<[number, number]>): void {
    for (const [partition, offset] of offsets) this.committed.set(partition, offset)
  }

  /** Every owned partition back to its committed offset (or its start); returns where each starts again. */
  rewind(): Array<{ partition: number; offset: number }> {
    const kept = [...this.owned].map((partition) => ({
      partition,
      offset: this.committed.get(partition) ?? this.range.get(partition)?.low ?? 0
    }))
    for (const { partition, offset } of kept) this.processed.set(partition, offset)
    return kept
  }

  /** The next offset per owned partition, for logs. */
  describe(): Record<number, number> {
    return Object.fromEntries(this.processed)
  }
}
