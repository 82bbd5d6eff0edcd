import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, it, type TestContext } from 'node:test'
import { createGenerator } from '../../lib/generators/index.js'
import { useTestKafka } from '../helpers/kafka.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))

function squeeze(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const options = { env: { ...process.env, KAFKA_BROKERS: '' }, timeout: 120_000 }
    execFile(process.execPath, [CLI, ...args], options, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr })
    })
  })
}

const RECORDS = 60
const POISON_OFFSET = 20

describe('consume --dead-letter-topic when the dead-letter copy cannot be written', () => {
  const kafka = useTestKafka()

  /** A one-partition topic of HTTP records, one of which (at POISON_OFFSET) does not decode. */
  async function topicWithPoison(t: TestContext): Promise<string> {
    const topic = await kafka.createTopic(t)
    const producer = await kafka.startProducer({ codec: { codec: 'zstd', level: 1 } })
    const generator = createGenerator('http', { seed: 5 })
    for (let i = 0; i < RECORDS; i++) {
      const value = generator.next().value
      await producer.send({ topic, key: null, value: i === POISON_OFFSET ? value.subarray(0, 9) : value })
    }
    await producer.close()
    return topic
  }

  async function committed(groupId: string, topic: string): Promise<number> {
    const [offsets] = await kafka.admin.fetchOffsets({ groupId, topics: [topic] })
    return Number(offsets?.partitions[0]?.offset ?? -1)
  }

  const consume = (topic: string, groupId: string, extra: string[] = []) =>
    squeeze([
      'consume',
      '--brokers',
      kafka.broker.brokers.join(','),
      '--topic',
      topic,
      '--group',
      groupId,
      '-X',
      'auto.commit.interval.ms=100',
      '--dead-letter-topic',
      `${topic}.no-such-dead-letters`,
      '--log-level',
      'silent',
      ...extra
    ])

  it('stops with one line and a non-zero exit, and the group commits no offset past the poison record', async (t) => {
    const topic = await topicWithPoison(t)
    const groupId = `g-${topic}`
    const result = await consume(topic, groupId)
    assert.notEqual(result.code, 0)
    const lines = result.stderr.trim().split('\n')
    assert.equal(lines.length, 1, `one line on stderr, got:\n${result.stderr}`)
    assert.match(lines[0] ?? '', /cannot write a poison record \(from .*-0@20\) to dead-letter topic .*no-such-dead/)
    assert.match(lines[0] ?? '', /\[SQUEEZE_ERR_DEAD_LETTER_FAILED\]$/)
    const offset = await committed(groupId, topic)
    console.log(`# dead-letter topic missing: exit ${result.code}, committed ${offset} (poison at ${POISON_OFFSET})`)
    assert.ok(offset <= POISON_OFFSET, `committed offset ${offset} is past the poison record at ${POISON_OFFSET}`)
  })

  it('with --on-dead-letter-failure skip: counts the copy, reads on and commits to the end', async (t) => {
    const topic = await topicWithPoison(t)
    const groupId = `g-${topic}`
    const result = await consume(topic, groupId, ['--on-dead-letter-failure', 'skip', '--format', 'http'])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /dead-letter copies not written: 1 \(skip\)/)
    assert.equal(await committed(groupId, topic), RECORDS)
  })
})
