import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { CODEC_IDS, parseCodecSpec, type CodecName } from '../../lib/codecs/index.js'
import { KafkaMainClasses, runKafkaJavaTool, type JavaToolResult } from '../../lib/embedded-broker/java-tools.js'
import { partitionForKey } from '../../lib/producer/partitioner.js'
import { RECENT_MS, useTestKafka } from '../helpers/kafka.js'

const kafka = useTestKafka()
let workDir: string
before(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'squeeze-interop-'))
})
after(async () => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true })
})

const CODECS: CodecName[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd']
/** What squeeze writes for the Java consumer: every codec at its default, plus LZ4HC at a middle and the top level. */
const SQUEEZE_SPECS = [...CODECS, 'lz4:9', 'lz4:17']

function bootstrap(): string {
  const first = kafka.broker.brokers[0]
  assert.ok(first !== undefined)
  return first
}

async function java(mainClass: string, args: string[], input?: string): Promise<JavaToolResult> {
  const result = await runKafkaJavaTool(mainClass, args, {
    timeoutMs: 45_000,
    ...(input !== undefined ? { input } : {})
  })
  assert.equal(result.code, 0, `${mainClass} exited ${result.code}:\n${result.stderr.slice(-2000)}`)
  return result
}

/** Log lines with no tabs or newlines, so they survive the console tools' line and key.separator framing. */
function logLine(i: number): string {
  return (
    `2024-05-18T02:40:${String(i % 60).padStart(2, '0')}.${String(i % 1000).padStart(3, '0')}Z web-${i % 5} nginx[${1200 + (i % 9)}]: ` +
    `10.0.${i % 7}.${i % 250} "GET /api/v1/items/${(i * 7919) % 10_000}?q=ä€😀 HTTP/1.1" ${i % 17 === 0 ? 503 : 200} ${300 + ((i * 104729) % 9000)} rt=0.${String(i % 997).padStart(3, '0')}`
  )
}

describe("squeeze and Kafka's Java clients read each other's batches", () => {
  for (const codec of SQUEEZE_SPECS) {
    it(`${codec}: the Java console consumer reads 500 squeeze records, keys and values intact, in partition order`, async (t) => {
      const topic = await kafka.createTopic(t, { partitions: 3 })
      const producer = await kafka.startProducer({
        codec: parseCodecSpec(codec),
        lingerMs: 10,
        batchSizeBytes: 16 * 1024
      })
      const expected = new Map<number, string[]>()
      for (let i = 0; i < 500; i++) {
        const key = Buffer.from(`host-${i % 37}.example.com`)
        const value = logLine(i)
        await producer.send({ topic, key, value: Buffer.from(value), headers: [], timestamp: RECENT_MS + i })
        const p = partitionForKey(key, 3)
        expected.set(p, [...(expected.get(p) ?? []), `${key.toString()}\t${value}`])
      }
      await producer.flush()
      assert.equal(producer.snapshot().recordsAcked, 500)

      const { stdout } = await java(KafkaMainClasses.CONSOLE_CONSUMER, [
        '--bootstrap-server',
        bootstrap(),
        '--topic',
        topic,
        '--from-beginning',
        '--max-messages',
        '500',
        '--timeout-ms',
        '20000',
        '--property',
        'print.key=true',
        '--property',
        'print.partition=true',
        '--property',
        'key.separator=\t'
      ])
      const got = new Map<number, string[]>()
      const lines = stdout.split('\n').filter((l) => l.startsWith('Partition:'))
      assert.equal(lines.length, 500, 'the console consumer printed every record')
      for (const line of lines) {
        const tab = line.indexOf('\t')
        const partition = Number(line.slice('Partition:'.length, tab))
        got.set(partition, [...(got.get(partition) ?? []), line.slice(tab + 1)])
      }
      assert.deepEqual([...got.keys()].sort(), [...expected.keys()].sort())
      for (const [p, list] of expected)
        assert.deepEqual(got.get(p), list, `partition ${p}: same records in the same order`)
    })
  }

  const payloadLines = Array.from({ length: 200 }, (_, i) => logLine(i * 3 + 1))
  const payloadSet = new Set(payloadLines)

  for (const codec of CODECS) {
    it(`${codec}: squeeze reads all 2000 records Kafka's Java producer (ProducerPerformance) wrote, in ${codec} batches`, async (t) => {
      const topic = await kafka.createTopic(t, { partitions: 2 })
      const payloadFile = join(workDir, `payload-${codec}.txt`)
      writeFileSync(payloadFile, payloadLines.join('\n'))
      await java(KafkaMainClasses.PRODUCER_PERFORMANCE, [
        '--topic',
        topic,
        '--num-records',
        '2000',
        '--throughput',
        '-1',
        '--payload-file',
        payloadFile,
        '--producer-props',
        `bootstrap.servers=${bootstrap()}`,
        `compression.type=${codec}`,
        'linger.ms=50',
        'batch.size=65536',
        'acks=all'
      ])
      const stored = await kafka.readAll([topic])
      const data = stored.filter((s) => !s.batch.isControl)
      assert.ok(data.length >= 1)
      for (const { batch } of data)
        assert.equal(batch.codecId, CODEC_IDS[codec], `batch at ${batch.baseOffset} is ${codec}`)
      const values = data.flatMap(({ batch }) => batch.records.map((r) => r.value?.toString('utf8') ?? '<null>'))
      assert.equal(values.length, 2000)
      for (const value of values)
        assert.ok(payloadSet.has(value), `unexpected value ${JSON.stringify(value.slice(0, 80))}`)
    })
  }

  it("keys: squeeze's murmur2 partitioner picks the partition the Java ConsoleProducer picked for 300 keys", async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 7 })
    // Lengths 1..30 (every murmur2 tail length), ASCII and multi-byte UTF-8.
    const keys = Array.from({ length: 300 }, (_, i) =>
      i % 3 === 0 ? `user-${i * 7919}` : i % 3 === 1 ? `k${'x'.repeat(i % 30)}-${i}` : `clé-${i}-日本`
    )
    const input = keys.map((k, i) => `${k}\t${logLine(i)}`).join('\n') + '\n'
    await java(
      KafkaMainClasses.CONSOLE_PRODUCER,
      [
        '--bootstrap-server',
        bootstrap(),
        '--topic',
        topic,
        '--property',
        'parse.key=true',
        '--property',
        'key.separator=\t',
        '--producer-property',
        'compression.type=lz4',
        '--producer-property',
        'linger.ms=5'
      ],
      input
    )
    const stored = await kafka.readAll([topic])
    const seen: string[] = []
    const partitions = new Set<number>()
    for (const { partition, batch } of stored) {
      if (batch.isControl) continue
      for (const record of batch.records) {
        assert.ok(record.key !== null)
        seen.push(record.key.toString('utf8'))
        partitions.add(partition)
        assert.equal(partitionForKey(record.key, 7), partition, `key ${JSON.stringify(record.key.toString('utf8'))}`)
      }
    }
    assert.deepEqual(seen.sort(), [...keys].sort(), 'every key arrived exactly once')
    assert.equal(partitions.size, 7, 'the keys spread over all 7 partitions')
  })
})
