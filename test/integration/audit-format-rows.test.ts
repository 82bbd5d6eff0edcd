import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { installKafkajsDecoders } from '../../lib/codecs/kafkajs-plugin.js'
import { runCompare } from '../../lib/compare/run-compare.js'
import { COPIER_PRODUCER_DEFAULTS } from '../../lib/copier/copier.js'
import { parseTargets } from '../../lib/copier/targets.js'
import { combinedLogLine } from '../../lib/formats/http-as-text.js'
import { readHttpRequest } from '../../lib/formats/http-request-reader.js'
import { formatFor } from '../../lib/formats/index.js'
import { createGenerator } from '../../lib/generators/index.js'
import { DEFAULT_PRODUCER_CONFIG } from '../../lib/producer/producer.js'
import { RECENT_MS, useTestKafka } from '../helpers/kafka.js'
import { auditCli } from '../helpers/audit-run.js'

const kafka = useTestKafka()
const TARGET = 'zstd:3'
/** linger.ms far beyond the fill: the copy and the projection both close batches on batch.size alone. */
const BATCHING = { lingerMs: 600_000, batchSizeBytes: 16 * 1024 }
const dir = mkdtempSync(join(tmpdir(), 'squeeze-audit-formats-'))
after(() => rmSync(dir, { recursive: true, force: true }))

async function fill(topic: string, values: readonly Buffer[]): Promise<void> {
  const producer = await kafka.startProducer({ codec: { codec: 'lz4', level: 1 }, lingerMs: 20 })
  await producer.sendMany(
    values.map((value, i) => ({ topic, partition: i % 2, key: null, value, timestamp: RECENT_MS + i }))
  )
  await producer.flush()
}

describe("squeeze audit: compare's format rows for topics of squeeze's HTTP records", () => {
  it('gives an HTTP topic the rows compare gives it (within 2%), and a topic of log lines none', async (t) => {
    installKafkajsDecoders()
    const run = `formats-${Date.now().toString(36)}`
    const http = await kafka.createTopic(t, { name: `${run}-http`, partitions: 2 })
    const lines = await kafka.createTopic(t, { name: `${run}-lines`, partitions: 2 })
    const generator = createGenerator('http', { seed: 11 })
    const values = Array.from({ length: 12_000 }, () => generator.next().value)
    await fill(http, values)
    await fill(
      lines,
      values.map((v) => Buffer.from(combinedLogLine(readHttpRequest(v))))
    )
    const json = join(dir, 'audit.json')
    const { run: audit, row } = await auditCli(kafka.connection.brokers, `${run}-.*`, json, [
      '--targets',
      TARGET,
      '-X',
      `linger.ms=${BATCHING.lingerMs}`,
      '-X',
      `batch.size=${BATCHING.batchSizeBytes}`
    ])
    assert.equal(audit.code, 0, `${audit.stdout}\n${audit.stderr}`)
    assert.equal(row(lines).formats, undefined, 'log lines are not Cap’n Proto records: no format rows')
    const audited = row(http).formats ?? assert.fail(`${http}: format rows`)
    assert.deepEqual(
      audited.map((f) => [f.format, f.target, f.skippedRecords]),
      [
        ['text', TARGET, 0],
        ['json', TARGET, 0]
      ],
      'both forms, at the recommended target'
    )
    // The projected batches: the sample (the whole topic) less each window's last batch, cut short by its end.
    for (const f of audited) assert.ok(f.records >= 0.95 * values.length && f.records <= values.length, `${f.records}`)
    // The note as one line: the table wraps it where the terminal's width falls.
    assert.match(
      audit.stdout.replace(/\n {4}/g, ' '),
      new RegExp(`^ {2}${http}: as text lines \\d+\\.\\d\\dx, as JSON \\d+\\.\\d\\dx the .* \\(at ${TARGET}\\)$`, 'm')
    )

    const targets = parseTargets(TARGET, http)
    t.after(() => kafka.admin.deleteTopics({ topics: targets.map((x) => x.topic) }).catch(() => undefined))
    const copied = (
      await runCompare({
        connection: kafka.connection,
        sourceTopic: http,
        sourceDescription: { kind: 'topic', description: http },
        targets,
        format: formatFor('http'),
        rateEvidence: { kind: 'topic', lookbackMs: 3_600_000 },
        producer: { ...DEFAULT_PRODUCER_CONFIG, ...COPIER_PRODUCER_DEFAULTS, ...BATCHING },
        keepTopics: false,
        consumers: 0,
        version: 'test',
        log: kafka.log
      })
    ).report
    const compared = copied.formats ?? assert.fail("compare's copy mode gives format rows")
    for (const f of audited) {
      const c = compared.find((x) => x.format === f.format) ?? assert.fail(`compare's ${f.format} row`)
      assert.equal(c.target, f.target)
      const off = Math.abs(f.storedVsRecords - c.storedVsRecords) / c.storedVsRecords
      t.diagnostic(`${f.format}: audit ${f.storedVsRecords.toFixed(4)}x, compare ${c.storedVsRecords.toFixed(4)}x`)
      assert.ok(
        off <= 0.02,
        `${f.format}: the audit's ${f.storedVsRecords.toFixed(4)}x, compare's ${c.storedVsRecords.toFixed(4)}x`
      )
    }
  })
})
