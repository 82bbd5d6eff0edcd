// `squeeze consume --group` on the embedded broker with the new consumer protocol (KIP-848): instances split a
// 6-partition topic, count each record once, commit, and hand partitions over when members join or die.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { counted, groupOnTopic, owners, PARTITIONS, scaleKillAndAdd, settled } from '../helpers/consumer-group.js'
import { poll } from '../helpers/poll.js'
import { startTestKafka, type TestKafka } from '../helpers/kafka.js'

let kafka: TestKafka
before(async () => {
  kafka = await startTestKafka()
})
after(async () => {
  await kafka?.stop()
})

describe('consume --group on a 6-partition topic', () => {
  it('scales from 1 to 3 instances with every record counted once; a SIGKILLed member\'s partitions resume from its commits; a new member takes a share (KIP-848)', (t) => scaleKillAndAdd(kafka, t))

  it('-X group.protocol=classic: a second member takes half the partitions (eager range rebalance) and each record is counted once', async (t) => {
    const group = await groupOnTopic(kafka, t, ['-X', 'group.protocol=classic', '-X', 'session.timeout.ms=6000', '-X', 'heartbeat.interval.ms=300'])
    await group.produceWave()
    const first = await group.join()
    await poll('one member owning all 6 partitions', () => owners([first]), (o) => o[0]?.length === PARTITIONS, 90_000)
    await group.allCommitted()
    await group.join()
    await poll('2 members owning 3 partitions each', () => owners(group.members), (o) => settled(o) && o.every((p) => p.length === 3), 90_000)
    await group.produceWave()
    await group.allCommitted()
    await poll('both waves counted', () => counted(group.members), (n) => n >= group.produced, 30_000)
    assert.equal(await counted(group.members), group.produced, 'each record is counted by exactly one member')
  })
})
