import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createKafkaClient } from '../../lib/kafka/connection.js'
import { useTestKafka } from '../helpers/kafka.js'
import { poll } from '../helpers/poll.js'
import { runSqueeze, startSqueeze } from '../helpers/squeeze-cli.js'

const kafka = useTestKafka()

/** stderr lines a person reads: not pino's JSON. */
function humanLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{'))
}

describe('a group whose active members are another application', () => {
  it("consume --group and copy --group refuse it, leaving the application's partitions alone; --join-foreign-group joins", async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 2 })
    // Uncompressed: kafkajs, the application here, reads no zstd without a plugin.
    const producer = await kafka.startProducer({ lingerMs: 5, codec: { codec: 'none', level: null } })
    for (let i = 0; i < 20; i++) await producer.send({ topic, key: null, value: Buffer.from(`line ${i}`) })
    await producer.close()
    // The application: a kafkajs consumer (classic protocol) of its own client id, holding both partitions.
    const groupId = `app-${topic}`
    const app = createKafkaClient({ ...kafka.connection, clientId: 'billing-app' }, kafka.log).consumer({ groupId })
    t.after(() => app.disconnect())
    let appRecords = 0
    const assignments: number[] = []
    app.on(app.events.GROUP_JOIN, (e) => assignments.push(Object.values(e.payload.memberAssignment).flat().length))
    await app.connect()
    await app.subscribe({ topic, fromBeginning: true })
    await app.run({
      eachMessage: async () => {
        appRecords++
      }
    })
    await poll(
      'the application read the topic',
      async () => appRecords,
      (n) => n === 20
    )
    const brokers = ['--brokers', kafka.broker.brokers.join(',')]
    for (const args of [
      ['consume', '--topic', topic, '--group', groupId],
      ['copy', '--topic', topic, '--group', groupId, '--targets', 'lz4', '--until-end']
    ]) {
      const refused = await runSqueeze([...args, ...brokers])
      assert.equal(refused.code, 1, refused.stderr)
      const lines = humanLines(refused.stderr)
      assert.equal(lines.length, 1, refused.stderr)
      assert.match(
        lines[0] as string,
        new RegExp(
          `^squeeze: group ${groupId} has 1 active member\\(s\\) of other clients \\(billing-app at .*\\): joining would ` +
            'take partitions from them .*--join-foreign-group to join it anyway \\[SQUEEZE_ERR_GROUP_MEMBERSHIP\\]$'
        )
      )
    }
    assert.deepEqual(assignments, [2], 'the application kept both partitions: no rebalance')
    assert.ok(!(await kafka.admin.listTopics()).includes(`${topic}.lz4-1`), 'the refused copy created no destination')
    // Asked to, squeeze joins (KIP-848: the broker takes the classic group over): the application gives up a partition.
    const joined = await startSqueeze([
      'consume',
      '--topic',
      topic,
      '--group',
      groupId,
      '--join-foreign-group',
      '--follow',
      ...brokers
    ])
    t.after(() => joined.kill('SIGKILL'))
    await poll(
      'the application rebalanced',
      async () => assignments.length,
      (n) => n >= 2
    )
    assert.equal(assignments.at(-1), 1, 'the application holds one partition of two')
    assert.equal(humanLines(joined.stderr()).length, 0, joined.stderr())
  })

  it('an application on the new protocol (KIP-848), which DescribeGroups does not describe, is seen and refused too', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 2 })
    const groupId = `app848-${topic}`
    const brokers = ['--brokers', kafka.broker.brokers.join(',')]
    // The application: a KIP-848 member under its own client id, holding the group's partitions.
    const app = await startSqueeze([
      'consume',
      '--topic',
      topic,
      '--group',
      groupId,
      '--client-id',
      'billing-app',
      '--follow',
      ...brokers
    ])
    t.after(() => app.kill('SIGKILL'))
    await poll(
      'the application holds the partitions',
      async () => app.stderr(),
      (stderr) => stderr.includes('group assignment changed')
    )
    const refused = await runSqueeze(['consume', '--topic', topic, '--group', groupId, ...brokers])
    assert.equal(refused.code, 1, refused.stderr)
    const lines = humanLines(refused.stderr)
    assert.equal(lines.length, 1, refused.stderr)
    assert.match(
      lines[0] as string,
      new RegExp(`^squeeze: group ${groupId} has 1 active member\\(s\\) of other clients \\(billing-app at `)
    )
  })
})
