import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { parseCodecSpec } from '../../lib/codecs/index.js'
import { defaultDestination } from '../../lib/copier/copier.js'
import { createCluster } from '../../lib/kafka/connection.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../../lib/producer/producer.js'
import type { ValueWriter } from '../../lib/protocol/record-batch-builder.js'
import { useTestKafka } from '../helpers/kafka.js'
import { startSqueeze } from '../helpers/squeeze-cli.js'

const kafka = useTestKafka()

async function values(topic: string, isolation: 'read_committed' | 'read_uncommitted'): Promise<string[]> {
  const batches = await kafka.readAll([topic], { isolation })
  return batches
    .filter(({ batch }) => !batch.isControl)
    .flatMap(({ batch }) => batch.records.map((r) => r.value?.toString() ?? '<null>'))
}

/**
 * Runs the CLI to its own end. A run still going after two minutes is killed with SIGKILL (no exit code): a
 * SIGTERM would make it stop gracefully with exit 0 and hide that it never reached the end by itself.
 */
async function runToEnd(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const child = await startSqueeze(args)
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
  try {
    return { code: await child.exited, stderr: child.stderr() }
  } finally {
    clearTimeout(timer)
  }
}

/** Writes one transaction per entry, in order, with one transactional producer (one producer id throughout). */
async function writeTransactions(
  t: TestContext,
  topic: string,
  transactions: ReadonlyArray<readonly [label: string, outcome: 'commit' | 'abort']>
): Promise<void> {
  const producer = new Producer(
    { ...DEFAULT_PRODUCER_CONFIG, codec: parseCodecSpec('none'), lingerMs: 5 },
    { cluster: createCluster(kafka.connection, kafka.log), log: kafka.log, transactionalId: `tx-${topic}` }
  )
  await producer.start()
  t.after(() => producer.close())
  for (const [label, outcome] of transactions) {
    producer.beginTransaction()
    for (let i = 0; i < 3; i++)
      await producer.send({ topic, partition: 0, key: null, value: Buffer.from(`${label}-${i}`) })
    if (outcome === 'abort') await producer.abortTransaction()
    else await producer.commitTransaction()
  }
}

describe('read_committed', () => {
  it('one producer aborts, aborts again, then commits within one fetch: only the committed records are read', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 1 })
    // One producer id throughout, as a copier restarted with --exactly-once keeps it: two aborts of one producer.
    await writeTransactions(t, topic, [
      ['aborted-1', 'abort'],
      ['aborted-2', 'abort'],
      ['committed', 'commit']
    ])

    // The log holds all nine records and three markers, a few hundred bytes: one fetch answer lists both aborts.
    assert.deepEqual(
      await values(topic, 'read_uncommitted'),
      ['aborted-1', 'aborted-2', 'committed'].flatMap((l) => [0, 1, 2].map((i) => `${l}-${i}`))
    )
    assert.deepEqual(await values(topic, 'read_committed'), ['committed-0', 'committed-1', 'committed-2'])
  })

  it('records written straight into batches (sendWritten) commit and abort with their transaction, and need one open', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 1 })
    const producer = new Producer(
      { ...DEFAULT_PRODUCER_CONFIG, codec: parseCodecSpec('none'), lingerMs: 5 },
      { cluster: createCluster(kafka.connection, kafka.log), log: kafka.log, transactionalId: `tx-${topic}` }
    )
    await producer.start()
    t.after(() => producer.close())
    const write: ValueWriter<string> = (buf, _view, at, text) => at + buf.write(text, at)
    const put = (text: string): Promise<void> | undefined => producer.sendWritten(topic, 64, write, text)
    await assert.rejects(Promise.resolve(put('outside')), /call beginTransaction\(\) before send\(\)/)
    producer.beginTransaction()
    // The first record loads the topic's metadata (a Buffer of its own, through send()); the next are appended.
    await put('aborted-0')
    assert.equal(put('aborted-1'), undefined, 'appended into the batch at once, no Buffer of its own')
    await producer.abortTransaction()
    producer.beginTransaction()
    for (const text of ['committed-0', 'committed-1']) assert.equal(put(text), undefined, `${text} appended at once`)
    await producer.commitTransaction()
    assert.deepEqual(await values(topic, 'read_uncommitted'), ['aborted-0', 'aborted-1', 'committed-0', 'committed-1'])
    assert.deepEqual(await values(topic, 'read_committed'), ['committed-0', 'committed-1'])
  })

  it('a source ending in an aborted transaction: consume without --follow, with --group, and copy --until-end finish with the committed records', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 1 })
    // The log ends with the aborted records and their abort marker: nothing read_committed hands over reaches the end.
    await writeTransactions(t, topic, [
      ['committed', 'commit'],
      ['aborted', 'abort']
    ])
    const committed = ['committed-0', 'committed-1', 'committed-2']
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-read-committed-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const brokers = ['--brokers', kafka.broker.brokers.join(',')]

    for (const [label, extra] of [
      ['alone', []],
      ['group member', ['--group', `g-${topic}`]]
    ] as const) {
      const json = join(dir, `${label.replace(' ', '-')}.json`)
      const consumed = await runToEnd([
        'consume',
        ...brokers,
        '--topic',
        topic,
        '--format',
        'none',
        '--json',
        json,
        ...extra
      ])
      assert.equal(consumed.code, 0, `consume (${label}): ${consumed.stderr}`)
      const [measured] = JSON.parse(readFileSync(json, 'utf8')) as Array<{ records: number }>
      assert.equal(measured?.records, committed.length, `consume (${label}) read the committed records only`)
    }

    const destination = defaultDestination(topic, parseCodecSpec('none'))
    t.after(() => kafka.admin.deleteTopics({ topics: [destination] }).catch(() => undefined))
    const copied = await runToEnd([
      'copy',
      ...brokers,
      '--topic',
      topic,
      '--targets',
      'none',
      '--until-end',
      '--commit-interval-ms',
      '200'
    ])
    assert.equal(copied.code, 0, `copy: ${copied.stderr}`)
    assert.deepEqual(await values(destination, 'read_committed'), committed)
  })
})
