import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { createGenerator } from '../../lib/generators/index.js'
import type { CompareReportJson } from '../../lib/report/compare-json.js'
import { useTestKafka } from '../helpers/kafka.js'
import { runSqueeze, type SqueezeRun } from '../helpers/squeeze-cli.js'

const RECORDS = 6000

async function compare(args: string[]): Promise<SqueezeRun & { report?: CompareReportJson }> {
  const json = join(mkdtempSync(join(tmpdir(), 'squeeze-projection-formats-')), 'r.json')
  const run = await runSqueeze(['compare', ...args, '--json', json, '--log-level', 'error', '--wide'])
  if (run.code !== 0) return run
  return { ...run, report: JSON.parse(readFileSync(json, 'utf8')) as CompareReportJson }
}

/**
 * The format rows pair each form's batches with the Cap'n Proto records' own batches at the recommended target:
 * those are the batches the projection compressed, so the records' stored bytes are the target's row.
 */
function assertFormatRows(report: CompareReportJson | undefined, records: number, what: string): void {
  assert.ok(report !== undefined && report.recommendation !== null, `${what}: a report with a recommendation`)
  const target = report.recommendation.target
  const row = report.targets.find((t) => t.target === target)
  assert.ok(row !== undefined)
  assert.deepEqual(
    report.formats?.map((f) => [f.format, f.target, f.records, f.skippedRecords]),
    [
      ['text', target, records, 0],
      ['json', target, records, 0]
    ],
    `${what}: a text-line and a JSON row at the recommended target, over every projected record`
  )
  for (const f of report.formats ?? []) {
    assert.ok(f.storedBytes > 0 && f.decodeCpuSecondsPerGiB > 0, `${what} ${f.format}: stored bytes and decode CPU`)
    assert.equal(f.batches, row.batches, `${what} ${f.format}: the projected batches, rebuilt`)
    const vsRecords = f.storedBytes / row.storedBytes
    assert.ok(
      Math.abs(f.storedVsRecords - vsRecords) < 1e-9,
      `${what} ${f.format}: ${f.storedVsRecords} vs ${vsRecords}`
    )
  }
}

const kafka = useTestKafka()

describe('squeeze compare --mode projection --format http: the copy mode’s format rows', () => {
  it("from the whole topic's batches, and from a --sample's, at the recommended target", async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 2 })
    const producer = await kafka.startProducer({ codec: { codec: 'lz4', level: 1 } })
    const http = createGenerator('http', { seed: 7 })
    const now = Date.now()
    await producer.sendMany(
      Array.from({ length: RECORDS }, (_, i) => ({
        topic,
        partition: i % 2,
        key: null,
        value: http.next().value,
        timestamp: now - 3_600_000 + i * 500
      }))
    )
    await producer.close()
    const args = ['--brokers', kafka.broker.brokers.join(','), '--topic', topic, '--mode', 'projection']
    const common = ['--format', 'http', '--targets', 'none,lz4,zstd:3', '-X', 'batch.size=65536']

    const whole = await compare([...args, ...common])
    assert.equal(whole.code, 0, whole.stderr)
    assert.equal(whole.report?.source.records, RECORDS)
    assertFormatRows(whole.report, RECORDS, 'whole topic')
    const target = whole.report?.recommendation?.target ?? ''
    for (const label of ['as text lines', 'as JSON'])
      assert.ok(whole.stdout.includes(`${target} ${label}`), `the terminal table has the ${label} row`)

    const sampled = await compare([...args, ...common, '--sample', '256KiB'])
    assert.equal(sampled.code, 0, sampled.stderr)
    const projected = sampled.report?.projection?.sampling?.windows.reduce((n, w) => n + w.records, 0) ?? 0
    assert.ok(projected > 0 && projected < RECORDS, `a sample: ${projected} records`)
    assertFormatRows(sampled.report, sampled.report?.targets[0]?.records ?? Number.NaN, 'sample')

    // Without --format http the records are bytes: no rows.
    const bytes = await compare([...args, '--targets', 'none,lz4'])
    assert.equal(bytes.code, 0, bytes.stderr)
    assert.equal(bytes.report?.formats, undefined)
  })
})
