import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { auditApplyAs } from '../../../lib/audit/audit-apply.js'
import type { TopicFacts } from '../../../lib/audit/audit-report.js'
import { canExpress } from '../../../lib/apply/client-limits.js'
import { parseCodecSpec } from '../../../lib/codecs/index.js'
import { sampleReportWithToday } from '../compare/sample-report.js'

function facts(compressionType: string): TopicFacts {
  return {
    topic: 'prod.access-logs',
    partitions: 6,
    replicationFactor: 3,
    retentionMs: 604_800_000,
    retentionBytes: -1,
    cleanupPolicy: 'delete',
    compressionType,
    compressionTypeSource: compressionType === 'producer' ? 'default' : 'topic',
    records: 400_000,
    groups: ['g']
  }
}

describe('auditApplyAs', () => {
  it("gives each named client the verdict's target or the best it can set, and settings naming the topic", () => {
    const report = sampleReportWithToday()
    const apply = auditApplyAs(report, facts('producer'), {
      clients: ['java', 'filebeat'],
      brokers: 'kafka-1:9092',
      change: true
    })
    assert.ok(apply !== null)
    const [java, filebeat] = apply.clients
    assert.equal(java?.target, java?.overall, 'Java can set any measured target: it gets the overall pick')
    assert.equal(java?.limited, false)
    assert.equal(parseCodecSpec(java?.overall ?? 'none').codec, 'zstd', 'the sample report picks a zstd level')
    assert.equal(filebeat?.limited, true, 'Filebeat has no zstd')
    assert.ok(filebeat?.target !== null && canExpress('filebeat', parseCodecSpec(filebeat?.target ?? '')))
    assert.match(filebeat?.text ?? '', /^filebeat cannot set zstd:\d+; gzip:\d stores \d+\.\d\dx of it$/)
    assert.match(java?.settings?.text ?? '', /^bootstrap\.servers=kafka-1:9092\ncompression\.type=zstd\n/)
    assert.equal(apply.topic?.mode, 'producer')
    assert.equal(apply.topic?.topic, 'prod.access-logs')
  })

  it('a topic whose compression.type names a codec gets the topic-side change; keep or no client gives none', () => {
    const report = sampleReportWithToday()
    const recompressed = auditApplyAs(report, facts('gzip'), { clients: ['java'], brokers: 'k:9092', change: true })
    assert.equal(recompressed?.topic?.mode, 'codec')
    assert.match(recompressed?.topic?.command ?? '', /--add-config compression\.type=zstd/)
    assert.equal(auditApplyAs(report, facts('producer'), { clients: ['java'], brokers: 'k:9092', change: false }), null)
    assert.equal(auditApplyAs(report, facts('producer'), { clients: [], brokers: 'k:9092', change: true }), null)
  })

  it("follows the verdict's margin: a client with no row that beats today's bytes by it gets no target", () => {
    // Today is zstd at zstd:3's size: only zstd:19 stores less than 90% of it, and librdkafka tops out at 12.
    const report = sampleReportWithToday({ codec: 'zstd', batchBytes: 524 })
    assert.equal(report.current?.verdict.action, 'change')
    const apply = auditApplyAs(report, facts('producer'), {
      clients: ['java', 'librdkafka'],
      brokers: 'k:9092',
      change: true
    })
    const [java, librdkafka] = apply?.clients ?? []
    assert.equal(java?.target, 'zstd:19', "Java gets the verdict's target")
    assert.equal(librdkafka?.target, null)
    assert.equal(librdkafka?.limited, true)
    assert.match(librdkafka?.text ?? '', /^librdkafka: none of the \d+ targets it can write meets/)
    assert.equal(apply?.topic?.configs.length, 1, 'the topic side is for the verdict: keep compression.type=producer')
  })
})
