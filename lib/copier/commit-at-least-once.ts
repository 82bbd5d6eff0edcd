import type { GroupCoordinator } from '../group/coordinator.js'
import { COORDINATOR_RETRY, retry } from '../retry.js'
import type { SourceOffset } from './copier-config.js'
import type { CommitContext, CommitMode, CommitStrategy } from './commit-strategy.js'
import type { FanOut } from './fan-out.js'
import type { Refusals } from './refused-policy.js'

export interface AtLeastOnceContext extends CommitContext {
  readonly fanOut: FanOut
  readonly refusals: Refusals
  /** The group's coordinator once the copier joined. */
  coordinator(): GroupCoordinator | null
}

/**
 * At-least-once: source offsets are committed to the group only after every destination acknowledged the
 * copies before them, and after the refused ones among them were dealt with as --on-refused says.
 */
export class AtLeastOnceCommits implements CommitStrategy {
  readonly commitsBehind = true
  readonly rewindsOnLoss = false

  constructor(private readonly context: AtLeastOnceContext) {
    // In a transaction any failure fails the commit (the producer aborts it), so only here are they sorted out.
    context.producer.onDeliveryFailure((failure) => context.refusals.deliveryFailed(failure))
  }

  start(): void {}

  canCommit(): boolean {
    return true
  }

  /**
   * Waits until every copy before the fan-out's marks (where it stood when the offsets were taken) is
   * acknowledged or failed, sorts out the failures, then commits as this member.
   */
  async commit(offsets: readonly SourceOffset[], mode: CommitMode): Promise<void> {
    const { producer, fanOut, refusals, groupId } = this.context
    const sent = mode === 'drain' ? producer.flush() : producer.flushAccepted()
    const marks = fanOut.marks()
    await sent
    await refusals.settle(marks)
    const coordinator = this.context.coordinator()
    if (offsets.length === 0 || coordinator === null) return
    await this.context.asMember(({ memberId, generationId }) =>
      retry(
        () => coordinator.commit({ groupId, generationIdOrMemberEpoch: generationId, memberId, offsets: [...offsets] }),
        COORDINATOR_RETRY
      )
    )
  }

  async abandon(): Promise<boolean> {
    return false
  }

  async close(): Promise<void> {}
}
