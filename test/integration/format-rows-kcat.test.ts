import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { describe, it } from 'node:test'
import { parseCodecSpec } from '../../lib/codecs/index.js'
import { FormatProjection } from '../../lib/compare/format-rows.js'
import { combinedLogLine } from '../../lib/formats/http-as-text.js'
import { readHttpRequest } from '../../lib/formats/http-request-reader.js'
import { createGenerator } from '../../lib/generators/index.js'
import type { IncomingRecord } from '../../lib/protocol/record.js'
import { useTestKafka } from '../helpers/kafka.js'

const kafka = useTestKafka()

/** kcat -P: one record per line, keyless, into partition 0, batched by count (a long linger, no size limit). */
async function kcatProduce(
  topic: string,
  lines: readonly string[],
  codec: string,
  level: number,
  perBatch: number
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      'kcat',
      [
        '-P',
        '-b',
        kafka.broker.brokers.join(','),
        '-t',
        topic,
        '-p',
        '0',
        '-z',
        codec,
        '-X',
        `compression.level=${level}`,
        '-X',
        'linger.ms=2000',
        '-X',
        `batch.num.messages=${perBatch}`,
        '-X',
        'batch.size=100000000',
        '-X',
        'message.max.bytes=100000000'
      ],
      { stdio: ['pipe', 'ignore', 'pipe'] }
    )
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', (e) => reject(new Error(`kcat did not start (bash scripts/ensure-apt.sh kcat): ${e.message}`)))
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`kcat exited ${code}: ${stderr.slice(-2000)}`))
    )
    child.stdin.end(`${lines.join('\n')}\n`)
  })
}

describe("compare's format rows", () => {
  for (const [codec, level] of [
    ['zstd', 3],
    ['lz4', 1],
    ['gzip', 6]
  ] as const) {
    it(`${codec}:${level}: the text-line row stores what kcat stores for the same lines in the same batches, within 2%`, async (t) => {
      const generator = createGenerator('http', { seed: 35 })
      const values = Array.from({ length: 20_000 }, () => generator.next().value)
      const lines = values.map((v) => combinedLogLine(readHttpRequest(v)))
      const topic = await kafka.createTopic(t, { partitions: 1 })
      await kcatProduce(topic, lines, codec, level, 2000)
      const stored = (await kafka.readAll([topic])).filter(({ batch }) => !batch.isControl)
      assert.equal(
        stored.reduce((n, { batch }) => n + batch.recordCount, 0),
        lines.length
      )
      assert.ok(stored.length > 1, 'kcat wrote several batches')
      // The same Cap'n Proto records, in kcat's batches with kcat's timestamps, as compare reads its target back.
      const projection = new FormatProjection(parseCodecSpec(`${codec}:${level}`))
      let at = 0
      for (const { batch } of stored) {
        const records: IncomingRecord[] = batch.records.map((r, i) => ({
          offset: r.offset,
          timestamp: r.timestamp,
          key: null,
          value: values[at + i] ?? null,
          headers: []
        }))
        at += records.length
        projection.addBatch(records, batch.storedBytes)
      }
      const text = projection.rows().find((r) => r.format === 'text')
      assert.ok(text !== undefined)
      const kcatBytes = stored.reduce((n, { batch }) => n + batch.storedBytes, 0)
      assert.equal(text.batches, stored.length)
      t.diagnostic(
        `${codec}:${level}: text-line row ${text.storedBytes} bytes, kcat ${kcatBytes} (${(text.storedBytes / kcatBytes).toFixed(4)}x), ${stored.length} batches`
      )
      assert.ok(
        Math.abs(text.storedBytes / kcatBytes - 1) <= 0.02,
        `the text-line row stores ${text.storedBytes} bytes, kcat ${kcatBytes}`
      )
    })
  }
})
