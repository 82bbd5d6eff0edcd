import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { repoRoot } from '../../helpers/repo-root.js'
import { Ajv } from 'ajv'
import { isKnownRate, type IngestRate } from '../../../lib/compare/ingest-rate.js'
import type { CompareReport } from '../../../lib/compare/compare-report.js'
import { recommend } from '../../../lib/compare/recommend.js'
import { compareReportJson, renderCompareJson } from '../../../lib/report/compare-json.js'
import { currentBaseline } from '../../../lib/compare/baseline.js'
import { sampleReport, sampleScan, SAMPLE_TARGETS, sampleBaselineContext } from './sample-report.js'

// The schema ships beside the sources, not in dist: find it from the repo root whether run from ts or dist.
function schemaPath(): string {
  return join(repoRoot(), 'schema', 'compare-report.schema.json')
}

const validate = new Ajv({ allErrors: true, strict: true }).compile(
  JSON.parse(readFileSync(schemaPath(), 'utf8')) as object
)

/** What a reader of `--json` output sees: the report as the report layer writes it, read back. */
function asJson(report: CompareReport): Record<string, unknown> {
  return JSON.parse(renderCompareJson(report)) as Record<string, unknown>
}

function errorsOf(document: unknown): string {
  validate(document)
  return (validate.errors ?? [])
    .map((e) => `${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
    .join('\n')
}

describe('compare report JSON schema', () => {
  it('accepts a full report, with and without a recommendation and a none target', () => {
    assert.equal(validate(asJson(sampleReport())), true, errorsOf(asJson(sampleReport())))
    const noNone = SAMPLE_TARGETS.filter((t) => t.codec !== 'none').map((t) => ({ ...t, ratioVsNone: null }))
    const report = {
      ...sampleReport(noNone),
      recommendation: recommend(noNone, { ingressBytesPerSecond: 1e6, replicationFactor: 3, consumers: 1 })
    }
    assert.equal(validate(asJson(report)), true, errorsOf(asJson(report)))
    assert.equal(validate(asJson({ ...sampleReport(), recommendation: null })), true)
  })

  it('accepts an unknown ingest rate with its reason and no daily saving, and rejects a rate that is neither', () => {
    const report = sampleReport()
    const unknown = {
      ...report,
      source: { ...report.source, ingestRate: { unknown: 'no line timestamps to measure a rate from' } },
      recommendation: recommend(SAMPLE_TARGETS, { ingressBytesPerSecond: null, replicationFactor: 3, consumers: 1 })
    }
    assert.equal(unknown.recommendation?.bytesPerDaySaved, null)
    assert.equal(validate(asJson(unknown)), true, errorsOf(asJson(unknown)))
    const neither = asJson(report)
    ;((neither.source as Record<string, unknown>).ingestRate as Record<string, unknown>).unknown = 'both'
    assert.equal(validate(neither), false)
    const badSource = asJson(report)
    ;(
      ((badSource.source as Record<string, unknown>).ingestRate as Record<string, unknown>).window as Record<
        string,
        unknown
      >
    ).source = 'produce-time'
    assert.equal(validate(badSource), false)
  })

  it('requires exactly the fields the TypeScript model has (the sample is type-checked as CompareReport)', () => {
    const schema = JSON.parse(readFileSync(schemaPath(), 'utf8')) as {
      required: string[]
      definitions: Record<string, { required: string[] }>
    }
    const report = sampleReport()
    const keys = (o: object): string[] => Object.keys(o).sort()
    assert.deepEqual([...schema.required].sort(), keys(compareReportJson(report)))
    const savings = compareReportJson(report).savingsVsNone
    assert.deepEqual([...schema.definitions.savingsVsNone!.required].sort(), keys(savings))
    const savingItem = (
      schema.definitions.savingsVsNone as unknown as { properties: { targets: { items: { required: string[] } } } }
    ).properties.targets.items
    assert.deepEqual([...savingItem.required].sort(), keys(savings.targets[0]!))
    assert.deepEqual([...schema.definitions.source!.required].sort(), keys(report.source))
    const rate = report.source.ingestRate
    assert.ok(isKnownRate(rate))
    assert.deepEqual([...schema.definitions.knownIngestRate!.required].sort(), keys(rate))
    assert.deepEqual([...schema.definitions.rateWindow!.required].sort(), keys(rate.window))
    assert.deepEqual(
      [...schema.definitions.unknownIngestRate!.required].sort(),
      keys({ unknown: 'why' } satisfies IngestRate)
    )
    assert.deepEqual([...schema.definitions.settings!.required].sort(), keys(report.settings))
    assert.deepEqual([...schema.definitions.target!.required].sort(), keys(report.targets[0]!))
    assert.deepEqual([...schema.definitions.recompression!.required].sort(), keys(report.targets[0]!.recompression))
    assert.deepEqual(
      [...schema.definitions.recommendation!.required].sort(),
      keys(compareReportJson(report).recommendation!)
    )
  })

  it('accepts the current baseline, changing or keeping, with and without a batching limit or larger batches today, and has exactly its fields', () => {
    const report = sampleReport()
    const context = sampleBaselineContext(report)
    const small = currentBaseline(sampleScan({ codec: 'lz4', batches: 20_000, batchBytes: 2048, records: 20 }), context)
    const keep = currentBaseline(
      sampleScan({ codec: 'zstd', batches: 100, batchBytes: 80 * 1024, records: 4000 }),
      context
    )
    const larger = currentBaseline(
      sampleScan({ codec: 'lz4', batches: 8, batchBytes: 4 * 1024 * 1024, records: 50_000 }),
      context
    )
    assert.ok(
      small?.batchingLimit != null &&
        small.verdict.action === 'change' &&
        keep?.verdict.action === 'keep' &&
        larger?.largerBatchesToday != null
    )
    for (const current of [small, keep, larger])
      assert.equal(validate(asJson({ ...report, current })), true, errorsOf(asJson({ ...report, current })))
    const schema = JSON.parse(readFileSync(schemaPath(), 'utf8')) as {
      definitions: Record<string, { required: string[] }>
    }
    const keys = (o: object): string[] => Object.keys(o).sort()
    assert.deepEqual([...schema.definitions.current!.required].sort(), keys(small))
    assert.deepEqual([...schema.definitions.currentRow!.required].sort(), keys(small.row))
    assert.deepEqual([...schema.definitions.savingVsCurrent!.required].sort(), keys(small.savings[0]!))
    assert.deepEqual([...schema.definitions.batchingLimit!.required].sort(), keys(small.batchingLimit))
    assert.deepEqual([...schema.definitions.largerBatchesToday!.required].sort(), keys(larger.largerBatchesToday))
  })

  it('rejects a report missing a required field, at the top and inside a target', () => {
    const top = asJson(sampleReport())
    delete top.settings
    assert.equal(validate(top), false)
    assert.match(errorsOf(top), /must have required property 'settings'/)

    const inner = asJson(sampleReport())
    delete (inner.targets as Array<Record<string, unknown>>)[2]?.storedBytes
    assert.equal(validate(inner), false)
    assert.match(errorsOf(inner), /\/targets\/2 must have required property 'storedBytes'/)
  })

  it('rejects wrong types and values outside the model', () => {
    const wrongType = asJson(sampleReport())
    ;(wrongType.targets as Array<Record<string, unknown>>)[1]!.ratio = '5.0'
    assert.match(errorsOf(wrongType), /\/targets\/1\/ratio must be number/)

    const badCodec = asJson(sampleReport())
    ;(badCodec.targets as Array<Record<string, unknown>>)[1]!.codec = 'brotli'
    assert.match(errorsOf(badCodec), /\/targets\/1\/codec must be equal to one of the allowed values/)

    const badCriterion = asJson(sampleReport())
    ;(badCriterion.recommendation as Record<string, unknown>).criterion = 'cheapest'
    assert.equal(validate(badCriterion), false)

    const badLevel = asJson(sampleReport())
    ;(badLevel.targets as Array<Record<string, unknown>>)[3]!.level = 3.5
    assert.match(errorsOf(badLevel), /\/targets\/3\/level must be integer,null/)
  })

  it('rejects properties the model does not have, at every level', () => {
    for (const mutate of [
      (doc: Record<string, unknown>) => {
        doc.extra = 1
      },
      (doc: Record<string, unknown>) => {
        ;(doc.source as Record<string, unknown>).extra = 1
      },
      (doc: Record<string, unknown>) => {
        ;(doc.settings as Record<string, unknown>).compressionType = 'zstd'
      },
      (doc: Record<string, unknown>) => {
        ;(doc.targets as Array<Record<string, unknown>>)[0]!.extra = 1
      },
      (doc: Record<string, unknown>) => {
        ;((doc.targets as Array<Record<string, unknown>>)[0]!.recompression as Record<string, unknown>).extra = 1
      },
      (doc: Record<string, unknown>) => {
        ;(doc.recommendation as Record<string, unknown>).extra = 1
      }
    ]) {
      const doc = asJson(sampleReport())
      mutate(doc)
      assert.equal(validate(doc), false)
      assert.match(errorsOf(doc), /must NOT have additional properties|must match exactly one schema/)
    }
  })
})
