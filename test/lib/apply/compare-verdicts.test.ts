import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { Ajv } from 'ajv'
import { CLIENT_NAMES } from '../../../lib/apply/client-limits.js'
import { compareVerdicts } from '../../../lib/apply/compare-verdicts.js'
import type { CompareReport } from '../../../lib/compare/compare-report.js'
import { renderApplyMarkdown, renderApplyText } from '../../../lib/report/compare-apply.js'
import { renderCompareJson } from '../../../lib/report/compare-json.js'
import { repoRoot } from '../../helpers/repo-root.js'
import { sampleReport, sampleReportWithToday } from '../compare/sample-report.js'

const schema = JSON.parse(readFileSync(join(repoRoot(), 'schema', 'compare-report.schema.json'), 'utf8')) as object
const validate = new Ajv({ allErrors: true, strict: true }).compile(schema)

function verdicts(report: CompareReport): ReturnType<typeof compareVerdicts> {
  return compareVerdicts(
    { report, partial: false, sentBytesByTopic: new Map() },
    { clients: [...CLIENT_NAMES], topicMode: 'producer', sourceTopic: 'prod.access-logs' },
    { consumers: 1 },
    'b:9092'
  )
}

describe('compareVerdicts: what each client applies follows the verdict against today', () => {
  it('today stores less than every target: nothing to change, no client target and no topic command', () => {
    // 15 bytes per record today, under the best target's (zstd:19, about 20).
    const report = sampleReportWithToday({ codec: 'zstd', batchBytes: 300 })
    assert.equal(report.current?.verdict.action, 'keep')
    const apply = verdicts(report)
    assert.equal(apply.keep, 'zstd')
    assert.deepEqual(
      apply.clients.map((c) => c.target),
      CLIENT_NAMES.map(() => null)
    )
    assert.equal(apply.topic, null)
    assert.equal(
      renderApplyText(apply, true),
      'per client: nothing to change; keep zstd, which no target beats by the margin (see "against current")\n'
    )
    assert.match(renderApplyMarkdown(apply), /^per client: nothing to change; keep zstd/m)
    const json = JSON.parse(renderCompareJson(report, apply)) as Record<string, unknown>
    assert.equal(validate(json), true, JSON.stringify(validate.errors))
  })

  it("today stores more: each client gets the verdict's target, which the topic command sets", () => {
    const report = sampleReportWithToday({ codec: 'lz4', batchBytes: 1049 })
    const verdict = report.current?.verdict
    assert.equal(verdict?.action, 'change')
    const apply = verdicts(report)
    assert.equal(apply.keep, null)
    const target = verdict?.action === 'change' ? verdict.target : ''
    assert.equal(apply.clients.find((c) => c.client === 'java')?.target, target)
    assert.match(renderApplyText(apply, false), new RegExp(`java: ${target}, as recommended`))
    const json = JSON.parse(renderCompareJson(report, apply)) as Record<string, unknown>
    assert.equal(validate(json), true, JSON.stringify(validate.errors))
  })

  it("without today's batches (a file or generated source), the recommendation's own target", () => {
    const report = sampleReport()
    const apply = verdicts(report)
    assert.equal(apply.keep, null)
    assert.equal(apply.clients.find((c) => c.client === 'java')?.overall, report.recommendation?.target)
  })
})
