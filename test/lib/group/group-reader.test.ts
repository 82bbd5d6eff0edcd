import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type {
  PartitionPosition,
  PartitionReader,
  PartitionStart,
  ReaderHandlers
} from '../../../lib/consumer/partition-reader.js'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'
import type { GroupCoordinator } from '../../../lib/group/coordinator.js'
import { GroupReader } from '../../../lib/group/group-reader.js'
import type { TopicPartition } from '../../../lib/group/membership.js'
import type { HeartbeatRequest, HeartbeatResponse } from '../../../lib/kafka/consumer-group-heartbeat.js'
import { KafkaErrorCode } from '../../../lib/kafka/error-codes.js'
import type { KafkajsCluster } from '../../../lib/kafka/kafkajs-internals.js'
import { commitRefused, type OffsetCommitArgs } from '../../../lib/kafka/offset-commit.js'
import { createLogger } from '../../../lib/log/logger.js'

const LOGS = 'AAECAwQFBgcICQoLDA0ODw'
const log = createLogger({ level: 'silent', name: 'group-reader-test' })

/**
 * A KIP-848 coordinator that assigns partition logs-0 at epoch 1 and answers commits as `refuse` says, and a reader
 * whose position moves on by 10 at each look, so a commit's offsets tell which look they came from. The timeline
 * holds every heartbeat epoch, commit and lost partition, in order; the run stops once `done(timeline)` holds.
 */
function fakeGroup(
  refuse: (commit: OffsetCommitArgs, coordinator: { epoch: number }) => number | null,
  done: (timeline: readonly string[]) => boolean
) {
  const timeline: string[] = []
  const stop = new AbortController()
  const state = { epoch: 1 }
  let position = 0
  let assigned: TopicPartition[] = []
  const note = (entry: string): void => {
    timeline.push(entry)
    if (done(timeline)) stop.abort()
  }
  const coordinator = {
    heartbeat: async (request: HeartbeatRequest): Promise<HeartbeatResponse> => {
      note(`heartbeat epoch=${request.memberEpoch}`)
      const joining = request.memberEpoch === 0
      return {
        errorCode: 0,
        errorMessage: null,
        memberId: request.memberId,
        memberEpoch: request.memberEpoch < 0 ? -1 : state.epoch,
        heartbeatIntervalMs: 5,
        assignment: joining ? [{ topicId: LOGS, partitions: [0] }] : null
      }
    },
    topicNames: async () => new Map([[LOGS, 'logs']]),
    resetCoordinator: () => undefined,
    committedOffsets: async (_member: unknown, partitions: readonly TopicPartition[]) =>
      partitions.map((tp) => ({ ...tp, offset: null })),
    commit: async (args: OffsetCommitArgs): Promise<void> => {
      const code = refuse(args, state)
      note(
        `commit epoch=${args.generationIdOrMemberEpoch} offset=${args.offsets[0]?.offset}${code === null ? '' : ' refused'}`
      )
      if (code !== null)
        throw commitRefused(args.offsets.map(({ topic, partition }) => ({ topic, partition, errorCode: code })))
    }
  }
  const reader = {
    run: (_handlers: ReaderHandlers, signal: AbortSignal) =>
      new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
    assign: async (starts: readonly PartitionStart[]) => {
      assigned = starts.map(({ topic, partition }) => ({ topic, partition }))
    },
    revoke: (partitions: readonly TopicPartition[]): PartitionPosition[] => {
      assigned = assigned.filter((tp) => !partitions.some((p) => p.partition === tp.partition))
      return partitions.map((tp) => ({ ...tp, position }))
    },
    positions: (): PartitionPosition[] => {
      position += 10
      return assigned.map((tp) => ({ ...tp, position }))
    }
  }
  const group = new GroupReader(
    {
      groupId: 'g',
      topics: ['logs'],
      protocol: 'consumer',
      commitIntervalMs: 20,
      rebalanceTimeoutMs: 30_000,
      sessionTimeoutMs: 45_000,
      heartbeatIntervalMs: 5
    },
    {
      reader: reader as unknown as PartitionReader,
      coordinator: coordinator as unknown as GroupCoordinator,
      cluster: {} as KafkajsCluster,
      log
    }
  )
  const handlers: ReaderHandlers = { onBatch: () => undefined, onCorruptBatch: () => undefined }
  return { timeline, run: () => group.run(handlers, stop.signal), stop: () => stop.abort() }
}

const commits = (timeline: readonly string[]): string[] => timeline.filter((entry) => entry.startsWith('commit'))

describe('group reader: an offset commit the coordinator refuses', () => {
  it('for a stale member epoch goes again, with the same offsets, at the epoch the next heartbeat brings', async () => {
    // The coordinator moves the member to epoch 2 at its first commit, as a rebalance settling meanwhile does.
    const group = fakeGroup(
      (commit, coordinator) => {
        if (commit.generationIdOrMemberEpoch === coordinator.epoch && coordinator.epoch === 1) {
          coordinator.epoch = 2
          return KafkaErrorCode.STALE_MEMBER_EPOCH
        }
        return commit.generationIdOrMemberEpoch === coordinator.epoch ? null : KafkaErrorCode.STALE_MEMBER_EPOCH
      },
      (timeline) => commits(timeline).length >= 2
    )
    await group.run()
    assert.deepEqual(commits(group.timeline).slice(0, 2), [
      'commit epoch=1 offset=10 refused',
      'commit epoch=2 offset=10'
    ])
    assert.ok(
      !group.timeline.slice(1).includes('heartbeat epoch=0'),
      `the member did not rejoin: ${group.timeline.join(' | ')}`
    )
  })

  it('as fenced drops the partitions uncommitted and rejoins the group', async () => {
    let refused = 0
    const group = fakeGroup(
      () => (refused++ === 0 ? KafkaErrorCode.UNKNOWN_MEMBER_ID : null),
      (timeline) =>
        (timeline.filter((e) => e === 'heartbeat epoch=0').length >= 2 && commits(timeline).length >= 2) ||
        commits(timeline).length >= 20
    )
    await group.run()
    const refusedAt = group.timeline.indexOf('commit epoch=1 offset=10 refused')
    assert.ok(refusedAt >= 0, group.timeline.join(' | '))
    const after = group.timeline.slice(refusedAt + 1)
    // Leaving first (epoch -1) lets the coordinator take a join at epoch 0 from a member id it still knows.
    assert.deepEqual(
      after.filter((e) => e.startsWith('heartbeat epoch=-1') || e === 'heartbeat epoch=0').slice(0, 2),
      ['heartbeat epoch=-1', 'heartbeat epoch=0'],
      after.join(' | ')
    )
    // Rejoined and assigned anew, the member commits again (its reader starts over from the group's offsets).
    assert.match(commits(after)[0] ?? '', /^commit epoch=1 offset=\d+$/)
  })

  it('for another reason ends the read with a one-line error that names the group and the refusal', async () => {
    const group = fakeGroup(
      () => KafkaErrorCode.GROUP_AUTHORIZATION_FAILED,
      (timeline) => commits(timeline).length >= 3
    )
    await assert.rejects(group.run(), (err: unknown) => {
      assert.ok(err instanceof SqueezeError)
      assert.equal(err.code, ErrorCodes.GROUP)
      assert.match(err.message, /^group g: offset commit refused .*GROUP_AUTHORIZATION_FAILED/)
      assert.doesNotMatch(err.message, /\n/)
      return true
    })
  })
})
