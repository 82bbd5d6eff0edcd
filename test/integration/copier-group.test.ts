// Copiers as members of one consumer group (squeeze's own KIP-848 membership): they split the source partitions,
// hand them over with a commit, and with --exactly-once a copier that lost its partitions cannot commit (KIP-447).
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { parseCodecSpec } from '../../lib/codecs/index.js'
import { Copier, defaultDestination, type CopyTarget } from '../../lib/copier/copier.js'
import { prepareDestinations } from '../../lib/copier/destinations.js'
import { GroupCoordinator } from '../../lib/group/coordinator.js'
import type { HeartbeatRequest, HeartbeatResponse } from '../../lib/kafka/consumer-group-heartbeat.js'
import { createCluster } from '../../lib/kafka/connection.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../../lib/producer/producer.js'
import { COORDINATOR_RETRY, retry } from '../../lib/retry.js'
import { RECENT_MS, useTestKafka } from '../helpers/kafka.js'
import { poll } from '../helpers/poll.js'
import { compareRecords, valuesByPartition } from '../helpers/record-figures.js'

const PARTITIONS = 4
const WAVE = 2000

const kafka = useTestKafka()

/** A coordinator whose heartbeats can be held back: the member goes silent while it goes on copying (a zombie). */
class StallingCoordinator extends GroupCoordinator {
  private held: { promise: Promise<void>; release: () => void } | null = null

  stall(): void {
    let release = (): void => undefined
    const promise = new Promise<void>((resolve) => (release = resolve))
    this.held = { promise, release }
  }

  resume(): void {
    this.held?.release()
    this.held = null
  }

  override async heartbeat(request: HeartbeatRequest): Promise<HeartbeatResponse> {
    if (this.held !== null) await this.held.promise
    return super.heartbeat(request)
  }
}

interface RunningCopier {
  readonly copier: Copier
  /** Stops the copy (it commits and leaves the group) and waits for it. */
  stop(): Promise<void>
}

/** A source of PARTITIONS partitions, its destinations, a producer of numbered waves, and copiers to start. */
async function copyGroup(t: TestContext, specs: readonly string[], exactlyOnce: boolean) {
  const source = await kafka.createTopic(t, { partitions: PARTITIONS })
  const groupId = `g-${source}`
  const targets: CopyTarget[] = specs.map((s) => ({
    spec: parseCodecSpec(s),
    topic: defaultDestination(source, parseCodecSpec(s))
  }))
  t.after(() => kafka.admin.deleteTopics({ topics: targets.map((x) => x.topic) }).catch(() => undefined))
  await prepareDestinations(kafka.admin, source, targets)
  const filler = await kafka.startProducer({ codec: parseCodecSpec('lz4:1'), lingerMs: 5 })
  const running: RunningCopier[] = []
  t.after(() => Promise.all(running.map((r) => r.stop())))
  let produced = 0
  return {
    source,
    groupId,
    targets,
    get produced() {
      return produced
    },
    async produceWave(): Promise<void> {
      await filler.sendMany(
        Array.from({ length: WAVE }, (_, i) => ({
          topic: source,
          partition: (produced + i) % PARTITIONS,
          key: null,
          value: Buffer.from(`record-${produced + i}`),
          timestamp: RECENT_MS + produced + i
        }))
      )
      await filler.flush()
      produced += WAVE
    },
    async start(name: string, coordinator?: GroupCoordinator): Promise<RunningCopier> {
      const cluster = createCluster(kafka.connection, kafka.log)
      await cluster.connect()
      const producer = new Producer(
        {
          ...DEFAULT_PRODUCER_CONFIG,
          lingerMs: 5,
          topicCodecs: Object.fromEntries(targets.map((x) => [x.topic, x.spec]))
        },
        {
          cluster: createCluster(kafka.connection, kafka.log),
          log: kafka.log,
          ...(exactlyOnce ? { transactionalId: `${groupId}.${name}` } : {})
        }
      )
      await producer.start()
      const copier = new Copier(
        { sourceTopic: source, groupId, targets, exactlyOnce, commitIntervalMs: 200, stopAtEnd: false },
        {
          cluster,
          admin: kafka.admin,
          producer,
          log: kafka.log.child({ copier: name }),
          ...(coordinator === undefined ? {} : { coordinator })
        }
      )
      const abort = new AbortController()
      const done = copier.run(abort.signal).finally(async () => {
        await producer.close()
        await cluster.disconnect()
      })
      let stopped: Promise<void> | null = null
      const handle = { copier, stop: () => (stopped ??= (abort.abort(), done)) }
      running.push(handle)
      return handle
    },
    /** Waits until the group committed every source partition up to its end. */
    async committedToEnd(): Promise<void> {
      const ends = new Map((await kafka.admin.fetchTopicOffsets(source)).map((o) => [o.partition, Number(o.high)]))
      await poll(
        'the group to commit every partition to its end',
        async () => {
          const [offsets] = await retry(
            () => kafka.admin.fetchOffsets({ groupId, topics: [source] }),
            COORDINATOR_RETRY
          )
          return (offsets?.partitions ?? []).map((p) => ({
            partition: p.partition,
            behind: (ends.get(p.partition) ?? 0) - Number(p.offset)
          }))
        },
        (lags) => lags.length === PARTITIONS && lags.every((l) => l.behind === 0),
        90_000
      )
    }
  }
}

const split = (a: Copier, b: Copier): boolean =>
  a.assignment().length > 0 && b.assignment().length > 0 && a.assignment().length + b.assignment().length === PARTITIONS

describe('copiers in one consumer group (KIP-848)', () => {
  for (const exactlyOnce of [true, false]) {
    const mode = exactlyOnce ? 'exactly-once' : 'at-least-once'
    it(
      `${mode}: 1 → 2 copiers split the source partitions; each record lands ${exactlyOnce ? 'exactly once, in order' : 'at least once'} per destination`,
      { timeout: 180_000 },
      async (t) => {
        const group = await copyGroup(t, ['none', 'zstd:1'], exactlyOnce)
        await group.produceWave()
        const a = await group.start('a')
        await poll(
          'the first copier to copy',
          async () => a.copier.snapshot().sourceRecords,
          (n) => n > 0
        )
        assert.equal(a.copier.assignment().length, PARTITIONS, 'alone, the first copier owns every partition')
        await group.produceWave()
        const b = await group.start('b')
        await poll(
          'the two copiers to split the partitions',
          async () => [a.copier.assignment(), b.copier.assignment()],
          () => split(a.copier, b.copier)
        )
        assert.deepEqual(
          [...a.copier.assignment(), ...b.copier.assignment()].sort(),
          Array.from({ length: PARTITIONS }, (_, p) => p),
          'each partition has one owner'
        )
        await group.produceWave()
        await group.committedToEnd()
        await Promise.all([a.stop(), b.stop()])
        const copied = [a.copier.snapshot().sourceRecords, b.copier.snapshot().sourceRecords]
        assert.ok(
          copied.every((n) => n > 0),
          `both copiers copied: ${copied.join(', ')}`
        )
        for (const target of group.targets) {
          const figures = compareRecords(
            await valuesByPartition(kafka, group.source),
            await valuesByPartition(kafka, target.topic)
          )
          console.log(`${mode} 1 → 2 copiers, ${target.topic}: ${JSON.stringify({ copiedByEach: copied, ...figures })}`)
          assert.equal(figures.lost, 0, `${target.topic}: records lost`)
          if (exactlyOnce) {
            assert.equal(figures.duplicated, 0, `${target.topic}: records duplicated (read_committed)`)
            assert.equal(figures.outOfOrder, 0, `${target.topic}: records out of order`)
          }
        }
      }
    )
  }

  it(
    'exactly-once: a zombie copier (heartbeats stopped past the session timeout) cannot commit: refused as fenced, it aborts and rejoins; 0 lost, 0 duplicated',
    { timeout: 180_000 },
    async (t) => {
      const group = await copyGroup(t, ['none'], true)
      const zombieCluster = createCluster(kafka.connection, kafka.log)
      await zombieCluster.connect()
      t.after(() => zombieCluster.disconnect())
      const zombieCoordinator = new StallingCoordinator(zombieCluster, group.groupId)
      await group.produceWave()
      const zombie = await group.start('zombie', zombieCoordinator)
      const survivor = await group.start('survivor')
      await poll(
        'the two copiers to split the partitions',
        async () => [zombie.copier.assignment(), survivor.copier.assignment()],
        () => split(zombie.copier, survivor.copier)
      )
      // Traffic all along, so the zombie has records to copy and offsets to commit while its partitions move.
      let producing = true
      const traffic = (async () => {
        while (producing) {
          await group.produceWave()
          await new Promise((resolve) => setTimeout(resolve, 250))
        }
      })()
      try {
        zombieCoordinator.stall()
        // The broker's group.consumer.session.timeout.ms (6 s in the test broker) removes the silent member.
        await poll(
          'the survivor to own every partition',
          async () => survivor.copier.assignment(),
          (owned) => owned.length === PARTITIONS
        )
        const before = survivor.copier.snapshot().sourceRecords
        await poll(
          'the survivor to copy the moved partitions for a while',
          async () => survivor.copier.snapshot().sourceRecords,
          (n) => n >= before + 2 * WAVE
        )
        zombieCoordinator.resume()
        await poll(
          'the zombie to rejoin and the partitions to split again',
          async () => [zombie.copier.assignment(), survivor.copier.assignment()],
          () => split(zombie.copier, survivor.copier)
        )
      } finally {
        zombieCoordinator.resume()
        producing = false
        await traffic
      }
      await group.committedToEnd()
      await Promise.all([zombie.stop(), survivor.stop()])
      const stats = zombie.copier.snapshot()
      const figures = compareRecords(
        await valuesByPartition(kafka, group.source),
        await valuesByPartition(kafka, group.targets[0]!.topic)
      )
      console.log(
        `exactly-once zombie: ${JSON.stringify({ zombieFencedCommits: stats.fencedCommits, zombieAborts: stats.aborts, ...figures })}`
      )
      assert.equal(figures.lost, 0, 'records lost')
      assert.equal(figures.duplicated, 0, 'records duplicated (read_committed)')
      assert.equal(figures.outOfOrder, 0, 'records out of order')
      assert.ok(stats.fencedCommits > 0, 'the zombie tried to commit the partitions it lost, and was refused')
      assert.ok(stats.aborts > 0, 'the zombie aborted its transaction')
    }
  )
})
