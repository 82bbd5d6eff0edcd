import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AssignerProtocol } from 'kafkajs'
import { ClassicMembership, rangeAssign } from '../../../lib/group/classic-membership.js'
import type { TopicPartition } from '../../../lib/group/membership.js'
import type { KafkajsClassicGroupCalls } from '../../../lib/kafka/kafkajs-internals.js'
import { createLogger } from '../../../lib/log/logger.js'
import { FakeCluster } from '../../helpers/fake-cluster.js'
import { poll } from '../../helpers/poll.js'

const ranges = (assignment: Map<string, Array<{ topic: string; partition: number }>>): Record<string, string[]> =>
  Object.fromEntries([...assignment].map(([member, tps]) => [member, tps.map((tp) => `${tp.topic}-${tp.partition}`)]))

describe('range assignment (classic protocol)', () => {
  it('gives members sorted by id consecutive ranges, the first ones one partition more, per topic', () => {
    const members = [
      { memberId: 'c', topics: ['logs'] },
      { memberId: 'a', topics: ['logs', 'dns'] },
      { memberId: 'b', topics: ['logs'] }
    ]
    assert.deepEqual(
      ranges(
        rangeAssign(
          members,
          new Map([
            ['logs', 7],
            ['dns', 2]
          ])
        )
      ),
      {
        c: ['logs-5', 'logs-6'],
        a: ['logs-0', 'logs-1', 'logs-2', 'dns-0', 'dns-1'],
        b: ['logs-3', 'logs-4']
      }
    )
  })

  it('leaves members beyond the partition count without partitions', () => {
    const members = ['m1', 'm2', 'm3'].map((memberId) => ({ memberId, topics: ['logs'] }))
    assert.deepEqual(ranges(rangeAssign(members, new Map([['logs', 2]]))), { m1: ['logs-0'], m2: ['logs-1'], m3: [] })
  })
})

const kafkaError = (type: string): Error => Object.assign(new Error(type), { type })

describe('classic group membership', () => {
  it(
    'shuts down while its JoinGroup waits on a dead member: it stops waiting and leaves, which ends the wait for the others',
    { timeout: 10_000 },
    async () => {
      const timeline: string[] = []
      const stop = new AbortController()
      let joins = 0
      let endPendingJoin = (_err: Error): void => undefined
      // A coordinator whose second JoinGroup (the rebalance after a member died) is answered only when this member
      // leaves: the dead member's session outlasts the test.
      const coordinator: KafkajsClassicGroupCalls = {
        joinGroup: async ({ memberId }) => {
          timeline.push(`join ${memberId === '' ? '(new)' : memberId}`)
          if (++joins === 1)
            return {
              generationId: 1,
              leaderId: 'm1',
              memberId: 'm1',
              members: [
                {
                  memberId: 'm1',
                  memberMetadata: AssignerProtocol.MemberMetadata.encode({
                    version: 0,
                    topics: ['logs'],
                    userData: Buffer.alloc(0)
                  })
                }
              ]
            }
          return new Promise((_resolve, reject) => {
            endPendingJoin = reject
          })
        },
        syncGroup: async ({ groupAssignment }) => ({
          memberAssignment: groupAssignment[0]?.memberAssignment ?? Buffer.alloc(0)
        }),
        heartbeat: async () => {
          throw kafkaError('REBALANCE_IN_PROGRESS')
        },
        leaveGroup: async ({ memberId }) => {
          timeline.push(`leave ${memberId}`)
          endPendingJoin(kafkaError('UNKNOWN_MEMBER_ID'))
        }
      }
      const names = (tps: readonly TopicPartition[]): string => tps.map((tp) => `${tp.topic}-${tp.partition}`).join(',')
      const membership = new ClassicMembership(
        {
          groupId: 'g',
          topics: ['logs'],
          sessionTimeoutMs: 45_000,
          rebalanceTimeoutMs: 300_000,
          heartbeatIntervalMs: 5
        },
        {
          transport: { broker: async () => coordinator, resetCoordinator: () => undefined },
          cluster: new FakeCluster({ topics: { logs: 2 } }),
          log: createLogger({ level: 'silent', name: 'classic-membership-test' }),
          listener: {
            onAssigned: async (tps) => void timeline.push(`assigned ${names(tps)}`),
            onRevoked: async (tps) => void timeline.push(`revoked ${names(tps)}`),
            onLost: async (tps) => void timeline.push(`lost ${names(tps)}`)
          }
        }
      )
      const run = membership.run(stop.signal)
      await poll(
        'the rejoin after the rebalance',
        async () => joins,
        (n) => n === 2,
        5_000
      )
      stop.abort()
      await run
      assert.deepEqual(timeline, [
        'join (new)',
        'assigned logs-0,logs-1',
        'revoked logs-0,logs-1',
        'join m1',
        'leave m1'
      ])
    }
  )

  it(
    'leaving, heartbeats go on with its generation while onRevoked commits, and LeaveGroup follows them',
    { timeout: 10_000 },
    async () => {
      const timeline: string[] = []
      const stop = new AbortController()
      const metadata = AssignerProtocol.MemberMetadata.encode({
        version: 0,
        topics: ['logs'],
        userData: Buffer.alloc(0)
      })
      const coordinator: KafkajsClassicGroupCalls = {
        joinGroup: async () => ({
          generationId: 7,
          leaderId: 'm1',
          memberId: 'm1',
          members: [{ memberId: 'm1', memberMetadata: metadata }]
        }),
        syncGroup: async ({ groupAssignment }) => ({
          memberAssignment: groupAssignment[0]?.memberAssignment ?? Buffer.alloc(0)
        }),
        heartbeat: async ({ groupGenerationId, memberId }) => {
          timeline.push(`heartbeat ${memberId} generation ${groupGenerationId}`)
        },
        leaveGroup: async ({ memberId }) => {
          timeline.push(`leave ${memberId}`)
        }
      }
      // A commit that waits on a coordinator's failover: it ends once two heartbeats kept the member meanwhile.
      const whileCommitting = async (): Promise<void> => {
        const from = timeline.length
        const giveUpAt = Date.now() + 5000
        while (timeline.slice(from).length < 2 && Date.now() < giveUpAt) await new Promise((r) => setTimeout(r, 5))
      }
      const membership = new ClassicMembership(
        {
          groupId: 'g',
          topics: ['logs'],
          sessionTimeoutMs: 10_000,
          rebalanceTimeoutMs: 30_000,
          heartbeatIntervalMs: 5
        },
        {
          transport: { broker: async () => coordinator, resetCoordinator: () => undefined },
          cluster: new FakeCluster({ topics: { logs: 1 } }),
          log: createLogger({ level: 'silent', name: 'classic-membership-test' }),
          listener: {
            onAssigned: async () => void timeline.push('assigned'),
            onRevoked: async () => {
              timeline.push('revoked')
              await whileCommitting()
            },
            onLost: async () => void timeline.push('lost')
          }
        }
      )
      const run = membership.run(stop.signal)
      await poll('the assignment', async () => timeline.includes('assigned'), Boolean, 5_000)
      stop.abort()
      await run
      const revokedAt = timeline.indexOf('revoked')
      const meanwhile = timeline.slice(revokedAt + 1, -1)
      assert.ok(meanwhile.length >= 2, `heartbeats while committing: ${meanwhile.length}`)
      assert.ok(
        meanwhile.every((e) => e === 'heartbeat m1 generation 7'),
        meanwhile.join('; ')
      )
      assert.equal(timeline.at(-1), 'leave m1')
    }
  )
})
