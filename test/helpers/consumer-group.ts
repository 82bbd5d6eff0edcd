// `squeeze consume --group` members as child processes, and what a test reads of them: partition owners (their
// lag gauges), records counted, the group's committed offsets. Shared by the single-broker and the cluster tests.
import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { COORDINATOR_RETRY, retry } from '../../lib/retry.js'
import { poll } from './poll.js'
import { scrapeCounter, scrapeSamples } from './metrics.js'
import { startSqueeze, type SqueezeProcess } from './squeeze-cli.js'
import type { TestKafka } from './kafka.js'

export const PARTITIONS = 6
const WAVE = 600

/** The group's committed offset per partition (-1 when none), as an admin reads them. */
async function committed(kafka: TestKafka, groupId: string, topic: string): Promise<number[]> {
  // The coordinator of a fresh __consumer_offsets answers "not the coordinator" / "loading" for a moment.
  const [offsets] = await retry(() => kafka.admin.fetchOffsets({ groupId, topics: [topic] }), COORDINATOR_RETRY)
  const byPartition = new Array<number>(PARTITIONS).fill(-1)
  for (const { partition, offset } of offsets?.partitions ?? []) byPartition[partition] = Number(offset)
  return byPartition
}

/** Which partitions each member reads now: the partition labels of its lag gauge. */
export async function owners(members: readonly SqueezeProcess[]): Promise<number[][]> {
  return Promise.all(
    members.map(async (m) =>
      ((await scrapeSamples(m.metricsPort, 'squeeze_consumer_lag_records')) ?? [])
        .map((s) => Number(s.labels.partition))
        .sort((a, b) => a - b)
    )
  )
}

/** Every partition owned by exactly one of the members, each member owning some. */
export function settled(owned: number[][]): boolean {
  const all = owned.flat().sort((a, b) => a - b)
  return owned.every((o) => o.length > 0) && all.length === PARTITIONS && all.every((p, i) => p === i)
}

export async function counted(members: readonly SqueezeProcess[]): Promise<number> {
  const counts = await Promise.all(members.map((m) => scrapeCounter(m.metricsPort, 'squeeze_records_consumed_total')))
  return counts.reduce<number>((sum, c) => sum + (c ?? 0), 0)
}

/** A 6-partition topic, a producer of waves of records spread evenly, and `consume --group` members to start. */
export async function groupOnTopic(kafka: TestKafka, t: TestContext, extraArgs: readonly string[]) {
  const topic = await kafka.createTopic(t, { partitions: PARTITIONS })
  const groupId = `g-${topic}`
  const producer = await kafka.startProducer({ codec: { codec: 'lz4', level: 1 }, lingerMs: 5 })
  const members: SqueezeProcess[] = []
  t.after(async () => {
    for (const m of members) m.kill('SIGKILL')
    await Promise.all(members.map((m) => m.exited))
  })
  const group = {
    topic,
    groupId,
    members,
    produced: 0,
    async produceWave(): Promise<void> {
      await producer.sendMany(
        Array.from({ length: WAVE }, (_, i) => ({
          topic,
          partition: i % PARTITIONS,
          key: null,
          value: Buffer.from(`record ${group.produced + i}`)
        }))
      )
      await producer.flush()
      group.produced += WAVE
    },
    async join(): Promise<SqueezeProcess> {
      const member = await startSqueeze([
        'consume',
        '--brokers',
        kafka.broker.brokers.join(','),
        '--topic',
        topic,
        '--format',
        'none',
        '--follow',
        '--group',
        groupId,
        '--log-level',
        'warn',
        '-X',
        'auto.commit.interval.ms=300',
        ...extraArgs
      ])
      members.push(member)
      return member
    },
    allCommitted(): Promise<number[]> {
      return poll(
        'every partition committed at its end',
        () => committed(kafka, groupId, topic),
        (c) => c.every((o) => o === group.produced / PARTITIONS),
        90_000
      )
    }
  }
  return group
}

/**
 * The scale-out scenario on a 6-partition topic: 1 member reads everything; 2 join and the next wave is counted
 * exactly once; one member is SIGKILLed and the survivors resume its partitions from its commits; a new member
 * takes a share. Committed offsets are sampled throughout and must never go backwards.
 * `args` go to every member (the protocol and its timeouts); `victim` is the index of the member killed, in
 * joining order (the classic protocol's group leader is the first).
 */
export async function scaleKillAndAdd(
  kafka: TestKafka,
  t: TestContext,
  options: { args?: readonly string[]; victim?: 0 | 1 | 2 } = {}
): Promise<void> {
  const group = await groupOnTopic(kafka, t, options.args ?? [])
  const { topic, groupId, members, join, produceWave, allCommitted } = group
  // Committed offsets sampled all along: none may ever go backwards, whoever commits.
  const history: number[][] = []
  let sampling = true
  t.after(() => {
    sampling = false
  })
  const sampler = (async () => {
    while (sampling) {
      history.push(await committed(kafka, groupId, topic))
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  })()

  // One instance reads everything.
  await produceWave()
  const first = await join()
  await poll(
    'one member owning all 6 partitions',
    () => owners([first]),
    (o) => o[0]?.length === PARTITIONS,
    90_000
  )
  await poll(
    'the first wave counted',
    () => counted(members),
    (n) => n >= group.produced,
    90_000
  )
  await allCommitted()

  // Two more: the partitions spread over three members, and a new wave is counted exactly once.
  await join()
  await join()
  await poll(
    '3 members owning 2 partitions each',
    () => owners(members),
    (o) => settled(o) && o.every((p) => p.length === 2),
    90_000
  )
  await produceWave()
  await allCommitted()
  await poll(
    'both waves counted',
    () => counted(members),
    (n) => n >= group.produced,
    30_000
  )
  assert.equal(await counted(members), group.produced, 'in steady state each record is counted by exactly one member')

  // SIGKILL one member: after its session times out the other two own its partitions and resume at its commits.
  const victim = members[options.victim ?? 2]
  assert.ok(victim !== undefined)
  const victimCount = (await scrapeCounter(victim.metricsPort, 'squeeze_records_consumed_total')) ?? 0
  victim.kill('SIGKILL')
  await victim.exited
  const survivors = members.filter((m) => m !== victim)
  await produceWave()
  await poll('the 2 survivors owning all 6 partitions', () => owners(survivors), settled, 90_000)
  await allCommitted()
  await poll(
    'the third wave counted',
    async () => victimCount + (await counted(survivors)),
    (n) => n >= group.produced,
    30_000
  )

  // A new member joins: it takes a share, and the next wave is read to the end.
  const newcomer = await join()
  const live = [...survivors, newcomer]
  await poll(
    '3 live members, each partition owned once',
    () => owners(live),
    (o) => settled(o) && o.every((p) => p.length === 2),
    90_000
  )
  await produceWave()
  await allCommitted()
  await poll(
    'every wave counted at least once',
    async () => victimCount + (await counted(live)),
    (n) => n >= group.produced,
    30_000
  )

  sampling = false
  await sampler
  const backwards = history
    .slice(1)
    .flatMap((offsets, i) =>
      offsets.flatMap((o, p) => (o < (history[i]?.[p] ?? -1) ? [`partition ${p}: ${history[i]?.[p]} -> ${o}`] : []))
    )
  assert.deepEqual(backwards, [], 'committed offsets never go backwards')
  for (const m of live) {
    m.kill('SIGTERM')
    assert.equal(await m.exited, 0, m.stderr())
  }
}
