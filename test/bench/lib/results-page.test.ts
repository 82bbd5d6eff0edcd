import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it } from 'node:test'
import { auditScaleNote, type AuditScaleResult } from '../../../bench/audit-scale.js'
import { benchEnv, LoadSampler, writeResultsPage } from '../../../bench/lib/results-page.js'

const AUDIT: AuditScaleResult = {
  smallTopics: 40,
  smallMiB: [1, 4],
  largeTopics: 1,
  largeMiB: 256,
  sample: '16MiB',
  filledBytes: 356 * 1024 * 1024,
  wallSeconds: 100,
  cpuSeconds: 50,
  maxRssMb: 500,
  exitCode: 0,
  perTopic: { p50: 1, p90: 2, max: 3, large: [3] },
  audited: 41
}

it('the page holds the method, the run settings, broker, load average and every section, and no other run', () => {
  process.env['BENCH_AUDIT_SMALL'] = '40'
  const load = new LoadSampler(60_000).stop()
  const path = join(mkdtempSync(join(tmpdir(), 'squeeze-page-')), 'benchmarks.md')
  writeResultsPage(
    path,
    { commit: 'abc1234', runs: 3, seconds: 1234.4, load, broker: 'the embedded Kafka JVM', librdkafkaConfluent: null },
    [
      { title: 'Producer', body: '| a | b |' },
      { title: 'Targets', body: '- [x] one' }
    ]
  )
  const page = readFileSync(path, 'utf8')
  assert.match(page, /^## Method$/m)
  assert.match(page, /at commit `abc1234`, `BENCH_AUDIT_SMALL=40 .*npm run bench` \(medians of 3\), 1234 s in total\./)
  assert.match(
    page,
    /broker: the embedded Kafka JVM; @confluentinc\/kafka-javascript: left out \(BENCH_SKIP=confluent\)/
  )
  assert.match(
    page,
    new RegExp(`1-minute load average during the run \\(2 samples, every 30 s\\): ${load.min.toFixed(1)} min`)
  )
  assert.match(page, /^## Producer\n\n\| a \| b \|\n\n## Targets\n\n- \[x\] one\n$/m)
  assert.doesNotMatch(page, /issue|Run of 20\d\d-\d\d-\d\d.*Run of/is)
  assert.ok(benchEnv().includes('BENCH_AUDIT_SMALL=40'))
})

it("the audit section says when it ran below the targets' scale, with the settings that scaled it", () => {
  process.env['BENCH_AUDIT_SMALL'] = '40'
  process.env['BENCH_AUDIT_SMALL_MIB'] = '1-4'
  const note = auditScaleNote(AUDIT)
  assert.match(
    note,
    /\*\*Reduced scale\*\*: 40 topics of 1-4 MiB and 1 of 256 MiB \(`BENCH_AUDIT_SMALL=40 BENCH_AUDIT_SMALL_MIB=1-4`\)/
  )
  assert.match(note, /not the 200 topics of 1-20 MiB and 5 of 1024 MiB the targets are set for/)
  assert.match(
    auditScaleNote({ ...AUDIT, smallTopics: 200, smallMiB: [1, 20], largeTopics: 5, largeMiB: 1024 }),
    /Full scale: 200 topics of 1-20 MiB and 5 of 1024 MiB\./
  )
})
