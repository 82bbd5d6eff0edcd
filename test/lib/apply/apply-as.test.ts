import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { Ajv } from 'ajv'
import { parse as parseToml } from 'smol-toml'
import { applyAs } from '../../../lib/apply/apply-as.js'
import { CLIENT_NAMES } from '../../../lib/apply/client-limits.js'
import { recommend } from '../../../lib/compare/recommend.js'
import type { CompareReport } from '../../../lib/compare/compare-report.js'
import { renderCompareJson } from '../../../lib/report/compare-json.js'
import { renderApplyMarkdown, renderApplyText } from '../../../lib/report/compare-apply.js'
import { repoRoot } from '../../helpers/repo-root.js'
import { sampleReport, SAMPLE_TARGETS, target } from '../compare/sample-report.js'

const MIB = 1024 * 1024
const schema = JSON.parse(readFileSync(join(repoRoot(), 'schema', 'compare-report.schema.json'), 'utf8')) as {
  definitions: Record<string, { required: string[] }>
}
const validate = new Ajv({ allErrors: true, strict: true }).compile(schema)
const rule = (rows: Parameters<typeof recommend>[0]): ReturnType<typeof recommend> =>
  recommend(rows, { ingressBytesPerSecond: null, replicationFactor: 3, consumers: 1, cpuBudgetSecondsPerGiB: 200 })
const ROWS = [...SAMPLE_TARGETS, target('zstd:12', Math.round(7.8 * MIB), 30)]

function report(): CompareReport {
  const base = sampleReport(ROWS)
  return { ...base, recommendation: rule(ROWS) }
}

describe('applyAs', () => {
  it(
    'gives every client its target, settings and source, and the JSON with applyAs matches the schema field ' +
      'for field',
    () => {
      const apply = applyAs(report(), [...CLIENT_NAMES], rule, {
        brokers: 'b:9092',
        topic: 'prod.access-logs',
        topicMode: 'producer'
      })
      assert.deepEqual(
        apply.clients.map((c) => c.client),
        [...CLIENT_NAMES]
      )
      assert.equal(apply.clients.find((c) => c.client === 'librdkafka')?.settings?.target, 'zstd:12')
      assert.equal(apply.clients.find((c) => c.client === 'java')?.settings?.target, 'zstd:19')
      const json = JSON.parse(renderCompareJson(report(), apply)) as Record<string, unknown>
      assert.equal(validate(json), true, JSON.stringify(validate.errors))
      const keys = (o: object): string[] => Object.keys(o).sort()
      assert.deepEqual([...(schema.definitions.applyAs?.required ?? [])].sort(), keys(apply))
      assert.deepEqual([...(schema.definitions.clientApply?.required ?? [])].sort(), keys(apply.clients[0] as object))
      const broken = JSON.parse(renderCompareJson(report(), apply)) as {
        applyAs: { clients: Array<Record<string, unknown>> }
      }
      broken.applyAs.clients[0]!.client = 'rdkafka'
      assert.equal(validate(broken), false, 'an unknown client name is refused')
    }
  )

  it("with small batches today, gives the batching in every client's own names", () => {
    const base = report()
    const withLimit: CompareReport = {
      ...base,
      current: {
        row: {
          label: 'current (as stored)',
          codec: 'lz4',
          codecs: [],
          records: 1,
          batches: 1,
          meanRecordsPerBatch: 3,
          batchBytes: { p10: 1, median: 900, p90: 1 },
          storedBytes: 1,
          uncompressedBytes: 1,
          ratio: 1,
          ratioVsNone: null,
          equivalentRatio: 1,
          decompressCpuSecondsPerGiB: 0,
          corruptBatches: 0
        },
        savings: [],
        verdict: { action: 'keep', margin: 0.05, best: null },
        largerBatchesToday: null,
        batchingLimit: {
          medianBatchBytes: 900,
          meanRecordsPerBatch: 3,
          thresholds: { medianBatchBytes: 16384, recordsPerBatch: 50 },
          lingerMs: 100,
          batchSizeBytes: 1_048_576,
          rebatched: null,
          split: null
        }
      }
    }
    const apply = applyAs(withLimit, ['java', 'filebeat'], rule, { brokers: 'b:9092', topic: 't', topicMode: 'codec' })
    assert.match(apply.batchingAdvice?.reason ?? '', /today's batches are small \(median 900 bytes/)
    assert.match(apply.clients[0]?.batchingAdvice ?? '', /^linger\.ms=100 {2}batch\.size=\d+$/)
    assert.match(apply.clients[1]?.batchingAdvice ?? '', /^bulk_max_size: \d+ {2}bulk_flush_frequency: 100ms$/)
    assert.equal(apply.topic?.mode, 'codec')
    assert.match(renderApplyText(apply, false), /batching is the limit: today's batches are small/)
  })

  it('prints one line per client, and the settings only under --show-settings; Markdown has each block fenced', () => {
    const apply = applyAs(report(), ['librdkafka', 'vector'], rule, {
      brokers: 'b:9092',
      topic: 'prod.access-logs',
      topicMode: 'producer'
    })
    const short = renderApplyText(apply, false)
    assert.match(short, /librdkafka cannot set zstd:19; zstd:12 stores 1\.04x of it/)
    assert.doesNotMatch(short, /compression\.codec=zstd/)
    // The command prints over lines with shell continuations: joined as a shell joins them, it is whole.
    assert.match(short, / \\\n {6}--alter /)
    assert.match(
      short.replace(/ \\\n\s+/g, ' '),
      /kafka-configs\.sh --bootstrap-server b:9092 --alter --entity-type topics --entity-name prod\.access-logs /
    )
    assert.match(renderApplyText(apply, true), /compression\.codec=zstd\ncompression\.level=12\n/)
    const markdown = renderApplyMarkdown(apply)
    const toml = /```toml\n([\s\S]*?)```/.exec(markdown)?.[1]
    assert.ok(toml !== undefined, 'the Vector block is fenced as TOML')
    assert.equal(
      (parseToml(toml) as { sinks: { kafka_out: { compression: string } } }).sinks.kafka_out.compression,
      'zstd'
    )
    assert.match(
      markdown,
      /\| librdkafka \| zstd:12 \| ratio [\d.]+x \| librdkafka cannot set zstd:19; zstd:12 stores 1\.04x of it \|/
    )
  })
})
