import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type {
  HeartbeatRequest,
  HeartbeatResponse,
  TopicIdPartitions
} from '../../../lib/kafka/consumer-group-heartbeat.js'
import { GroupMembership, type TopicPartition } from '../../../lib/group/membership.js'
import { createLogger } from '../../../lib/log/logger.js'

const LOGS = 'AAECAwQFBgcICQoLDA0ODw'
const log = createLogger({ level: 'silent', name: 'membership-test' })

type Answer = Partial<HeartbeatResponse> | Error

/**
 * A scripted coordinator: answers each heartbeat with the next scripted answer and records every request and
 * listener call in one timeline, so the tests check the order a real coordinator relies on.
 */
function fakeGroup(script: Answer[], onRevoked?: (timeline: string[]) => Promise<void>) {
  const timeline: string[] = []
  const requests: HeartbeatRequest[] = []
  const stop = new AbortController()
  const describe = (tps: readonly TopicPartition[]): string => tps.map((tp) => `${tp.topic}-${tp.partition}`).join(',')
  const membership = new GroupMembership(
    { groupId: 'g', topics: ['logs'], rebalanceTimeoutMs: 30_000 },
    {
      log,
      transport: {
        heartbeat: async (request) => {
          requests.push(request)
          const owned = request.ownedPartitions.flatMap((tp) => tp.partitions).join(',')
          timeline.push(`heartbeat epoch=${request.memberEpoch} owned=${owned}`)
          const answer = script.shift()
          if (script.length === 0) stop.abort()
          if (answer instanceof Error) throw answer
          return {
            errorCode: 0,
            errorMessage: null,
            memberId: request.memberId,
            memberEpoch: request.memberEpoch,
            heartbeatIntervalMs: 5,
            assignment: null,
            ...answer
          }
        },
        topicNames: async () => new Map([[LOGS, 'logs']]),
        resetCoordinator: () => timeline.push('reset coordinator')
      },
      listener: {
        onAssigned: async (tps) => void timeline.push(`assigned ${describe(tps)}`),
        onRevoked: async (tps) => {
          timeline.push(`revoked ${describe(tps)}`)
          await onRevoked?.(timeline)
        },
        onLost: async (tps) => void timeline.push(`lost ${describe(tps)}`)
      }
    }
  )
  return { membership, timeline, requests, run: () => membership.run(stop.signal) }
}

const assign = (epoch: number, ...partitions: number[]): Partial<HeartbeatResponse> => ({
  memberEpoch: epoch,
  assignment: [{ topicId: LOGS, partitions }] satisfies TopicIdPartitions[]
})

describe('group membership (KIP-848 heartbeat state machine)', () => {
  it('joins with epoch 0 and a client-made member id, takes the assignment and acknowledges it at once', async () => {
    const group = fakeGroup([assign(1, 0, 1), { memberEpoch: 1 }, {}])
    await group.run()
    assert.deepEqual(group.timeline, [
      'heartbeat epoch=0 owned=',
      'assigned logs-0,logs-1',
      'heartbeat epoch=1 owned=0,1',
      'heartbeat epoch=1 owned=0,1',
      'revoked logs-0,logs-1',
      'heartbeat epoch=-1 owned='
    ])
    assert.ok(group.membership.memberId.length >= 16)
    assert.ok(
      group.requests.every((r) => r.memberId === group.membership.memberId),
      "one member id for the member's lifetime"
    )
    assert.deepEqual(group.requests[0]?.subscribedTopicNames, ['logs'])
  })

  it('revokes what a new assignment drops before it assigns anything, and reports the smaller set in the next heartbeat', async () => {
    const group = fakeGroup([assign(1, 0, 1, 2), assign(1, 1, 2), assign(2, 1, 2, 3), {}])
    await group.run()
    assert.deepEqual(group.timeline.slice(0, 6), [
      'heartbeat epoch=0 owned=',
      'assigned logs-0,logs-1,logs-2',
      'heartbeat epoch=1 owned=0,1,2',
      'revoked logs-0',
      'heartbeat epoch=1 owned=1,2',
      'assigned logs-3'
    ])
    assert.equal(group.timeline[6], 'heartbeat epoch=2 owned=1,2,3')
  })

  it('rejoin() (a commit refused as fenced) ends the wait between heartbeats, drops the partitions uncommitted and joins with epoch 0', async () => {
    const group = fakeGroup([assign(3, 4, 5), { memberEpoch: 3, heartbeatIntervalMs: 60_000 }, {}, assign(4, 4), {}])
    const running = group.run()
    await new Promise((resolve) => setTimeout(resolve, 50))
    group.membership.rejoin()
    await running
    assert.deepEqual(group.timeline, [
      'heartbeat epoch=0 owned=',
      'assigned logs-4,logs-5',
      'heartbeat epoch=3 owned=4,5',
      'lost logs-4,logs-5',
      'heartbeat epoch=-1 owned=',
      'heartbeat epoch=0 owned=',
      'assigned logs-4',
      'heartbeat epoch=4 owned=4',
      'revoked logs-4',
      'heartbeat epoch=-1 owned='
    ])
  })

  it('a fenced member (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID) drops its partitions without committing and rejoins with epoch 0', async () => {
    // A member the coordinator still knows (FENCED_MEMBER_EPOCH) leaves first: Kafka 4.1 fences its epoch-0 join too.
    for (const [errorCode, leave] of [
      [110, ['heartbeat epoch=-1 owned=']],
      [25, []]
    ] as const) {
      const group = fakeGroup([
        assign(3, 4, 5),
        { errorCode, memberEpoch: -1 },
        ...(leave.length > 0 ? [{}] : []),
        assign(5, 5),
        {}
      ])
      await group.run()
      assert.deepEqual(
        group.timeline.slice(0, 6 + leave.length),
        [
          'heartbeat epoch=0 owned=',
          'assigned logs-4,logs-5',
          'heartbeat epoch=3 owned=4,5',
          'lost logs-4,logs-5',
          ...leave,
          'heartbeat epoch=0 owned=',
          'assigned logs-5'
        ],
        `error ${errorCode}`
      )
      assert.ok(
        !group.timeline.includes('revoked logs-4,logs-5'),
        'lost partitions are not committed: the epoch is gone'
      )
    }
  })

  it(
    "leaving, heartbeats go on with the member's epoch while onRevoked commits, and the leave (epoch -1) follows them",
    { timeout: 10_000 },
    async () => {
      // A commit that waits on a coordinator's failover: it ends once two heartbeats kept the member meanwhile
      // (without them it would outlast the session and be refused as fenced), or after 5 s, and the test fails.
      const whileCommitting = async (timeline: string[]): Promise<void> => {
        const from = timeline.length
        const giveUpAt = Date.now() + 5000
        while (
          timeline.slice(from).filter((e) => e === 'heartbeat epoch=2 owned=0,1').length < 2 &&
          Date.now() < giveUpAt
        )
          await new Promise((resolve) => setTimeout(resolve, 5))
      }
      const group = fakeGroup([assign(2, 0, 1), {}], whileCommitting)
      await group.run()
      assert.deepEqual(group.timeline.slice(0, 4), [
        'heartbeat epoch=0 owned=',
        'assigned logs-0,logs-1',
        'heartbeat epoch=2 owned=0,1',
        'revoked logs-0,logs-1'
      ])
      const meanwhile = group.timeline.slice(4, -1)
      assert.ok(meanwhile.length >= 2, `heartbeats while committing: ${meanwhile.length}`)
      assert.ok(
        meanwhile.every((e) => e === 'heartbeat epoch=2 owned=0,1'),
        meanwhile.join('; ')
      )
      assert.equal(group.timeline.at(-1), 'heartbeat epoch=-1 owned=')
    }
  )

  it(
    'leaving, heartbeats stop once the coordinator no longer knows the member (UNKNOWN_MEMBER_ID)',
    { timeout: 10_000 },
    async () => {
      let revoking = true
      const script: Answer[] = [assign(2, 0, 1), {}]
      const whileCommitting = async (timeline: string[]): Promise<void> => {
        script.push({ errorCode: 25 })
        const giveUpAt = Date.now() + 5000
        while (!timeline.slice(4).includes('heartbeat epoch=2 owned=0,1') && Date.now() < giveUpAt)
          await new Promise((r) => setTimeout(r, 5))
        // Several intervals: a heartbeat sent after the refusal would show here.
        await new Promise((resolve) => setTimeout(resolve, 100))
        revoking = false
      }
      const group = fakeGroup(script, whileCommitting)
      await group.run()
      assert.equal(revoking, false)
      assert.deepEqual(group.timeline, [
        'heartbeat epoch=0 owned=',
        'assigned logs-0,logs-1',
        'heartbeat epoch=2 owned=0,1',
        'revoked logs-0,logs-1',
        'heartbeat epoch=2 owned=0,1',
        'heartbeat epoch=-1 owned='
      ])
    }
  )

  it('finds the coordinator again when it moved or the connection broke, and keeps its assignment', async () => {
    const connectionLost = Object.assign(new Error('Connection closed'), { name: 'KafkaJSConnectionError' })
    const group = fakeGroup([assign(1, 0), { errorCode: 16 }, connectionLost, { memberEpoch: 1 }, {}])
    await group.run()
    assert.deepEqual(group.timeline.slice(0, 8), [
      'heartbeat epoch=0 owned=',
      'assigned logs-0',
      'heartbeat epoch=1 owned=0',
      'reset coordinator',
      'heartbeat epoch=1 owned=0',
      'reset coordinator',
      'heartbeat epoch=1 owned=0',
      'heartbeat epoch=1 owned=0'
    ])
  })

  it('an error no rejoin fixes ends the member with one line naming the group and the error', async () => {
    const group = fakeGroup([{ errorCode: 81, errorMessage: 'max 2 members' }, {}])
    await assert.rejects(group.run(), (err: Error) => {
      assert.match(err.message, /^group g: GROUP_MAX_SIZE_REACHED: .*\(max 2 members\)$/)
      assert.doesNotMatch(err.message, /\n/)
      return true
    })
  })
})
