import type { GroupMemberIdentity } from '../kafka/txn-offset-commit.js'
import type { Producer } from '../producer/producer.js'
import type { SourceOffset } from './copier-config.js'

/**
 * 'drain': every copy sent so far is sent and settled before the offsets are committed (a revoke, the end).
 * 'behind': the periodic commit, which sends what the producer accepted and may settle it while the copy goes on.
 */
export type CommitMode = 'drain' | 'behind'

/** What a commit strategy needs from the copier. */
export interface CommitContext {
  readonly producer: Producer
  readonly groupId: string
  /** Runs `commit` with this copier's member id and epoch; does nothing before the copier joins. */
  asMember(commit: (member: GroupMemberIdentity) => Promise<void>): Promise<void>
  /** True once the copy stops: no new transaction begins then. */
  stopping(): boolean
}

/**
 * How the copier makes its copies durable and commits the source offsets that follow them: after every
 * destination acknowledged them (at-least-once), or in the same Kafka transaction (exactly-once).
 */
export interface CommitStrategy {
  /** Whether the periodic commit may finish outside the copy lane while the copy goes on into new batches. */
  readonly commitsBehind: boolean
  /** Whether copies not yet committed sit in an open transaction that lost partitions must be rewound with. */
  readonly rewindsOnLoss: boolean
  /** Before the first copy. */
  start(): void
  /** False when a commit has nothing to carry: exactly-once, once the last transaction closed. */
  canCommit(): boolean
  /** Commits `offsets` with every copy before them; rejects with GROUP_FENCED when the group refused them. */
  commit(offsets: readonly SourceOffset[], mode: CommitMode): Promise<void>
  /**
   * Drops the copies since the last commit after a fenced commit or lost partitions, opening a new transaction
   * when `reopen`; true when something was aborted.
   */
  abandon(reopen: boolean): Promise<boolean>
  /** At the end: aborts what is still open. */
  close(): Promise<void>
}
