import type { SourceOffset } from './copier-config.js'
import type { CommitContext, CommitStrategy } from './commit-strategy.js'

/**
 * Exactly-once: the copies and the source offsets are committed in one Kafka transaction, the offsets carrying
 * this member's id and epoch so a copier that lost its partitions cannot commit them (KIP-447). A transaction
 * is open from the start until the copy stops; each commit closes one and begins the next.
 */
export class TransactionalCommits implements CommitStrategy {
  readonly commitsBehind = false
  readonly rewindsOnLoss = true
  private open = false

  constructor(private readonly context: CommitContext) {}

  start(): void {
    this.begin()
  }

  canCommit(): boolean {
    return this.open
  }

  async commit(offsets: readonly SourceOffset[]): Promise<void> {
    const { producer, groupId } = this.context
    if (offsets.length > 0) await this.context.asMember((member) => producer.sendOffsets(groupId, offsets, member))
    this.open = false
    await producer.commitTransaction()
    if (!this.context.stopping()) this.begin()
  }

  async abandon(reopen: boolean): Promise<boolean> {
    if (this.open) await this.abort()
    if (reopen) this.begin()
    return true
  }

  async close(): Promise<void> {
    if (this.open) await this.abort()
  }

  private begin(): void {
    this.context.producer.beginTransaction()
    this.open = true
  }

  private async abort(): Promise<void> {
    this.open = false
    await this.context.producer.abortTransaction()
  }
}
