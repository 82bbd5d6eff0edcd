import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { createGenerator } from '../../lib/generators/index.js'
import { RECENT_MS, useTestKafka } from '../helpers/kafka.js'
import { auditCli } from '../helpers/audit-run.js'

const kafka = useTestKafka()
const MIB = 1024 * 1024
/**
 * Far more than the default targets project in the deadline on any machine: one thread compresses every record
 * with eight targets (gzip:6 and zstd:9 among them), at tens of MiB a second at best.
 */
const BIG_BYTES = 64 * MIB
const dir = mkdtempSync(join(tmpdir(), 'squeeze-audit-deadline-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** Fills `topic` with generated http log lines across its partitions, about `bytes` of record values. */
async function fill(topic: string, bytes: number, partitions: number): Promise<number> {
  const producer = await kafka.startProducer({ codec: { codec: 'lz4', level: 1 }, lingerMs: 20 })
  const http = createGenerator('http', { seed: 7 })
  let written = 0
  for (let i = 0; written < bytes;) {
    const block = Array.from({ length: 2000 }, () => {
      const value = http.next().value
      written += value.length
      const at = i++
      return { topic, partition: at % partitions, key: null, value, timestamp: RECENT_MS + at }
    })
    await producer.sendMany(block)
  }
  await producer.flush()
  return written
}

describe('squeeze audit --max-duration', () => {
  it('cuts the topic in flight where it stands, skips the topics not started, and exits 5 with the report', async (t) => {
    const run = `deadline-${Date.now().toString(36)}`
    const big = await kafka.createTopic(t, { name: `${run}-a-big`, partitions: 3 })
    const later = await kafka.createTopic(t, { name: `${run}-b-later`, partitions: 1 })
    const bigBytes = await fill(big, BIG_BYTES, 3)
    await fill(later, 256 * 1024, 1)
    const json = join(dir, 'audit.json')
    const markdown = join(dir, 'audit.md')
    // One thread: the topics run one after the other in name order, so the deadline finds the big one in flight.
    const {
      run: audit,
      report,
      row
    } = await auditCli(kafka.connection.brokers, `${run}-.*`, json, [
      '--sample',
      '256MiB',
      '--threads',
      '1',
      '--max-duration',
      '3s',
      '--markdown',
      markdown
    ])
    assert.equal(audit.code, 5, `a pass the deadline ended is a partial report:\n${audit.stdout}\n${audit.stderr}`)

    const cut = row(big)
    t.diagnostic(`${big}: ${cut.error}; the pass took ${report.wallSeconds.toFixed(1)} s`)
    assert.equal(cut.status, 'cut', `${big}: ${cut.error}`)
    assert.match(cut.error ?? '', /^cut: --max-duration \(3 s\) ended the pass \(\d+\.\d MiB of its sample read\)$/)
    assert.ok(cut.cutAfterBytes !== undefined && cut.cutAfterBytes <= bigBytes, `read ${cut.cutAfterBytes}`)
    assert.equal(cut.verdict, null, 'a cut topic has no verdict')
    assert.deepEqual(cut.targets, [])
    assert.equal(row(later).status, 'not-reached')
    assert.equal(report.partial, true)
    assert.equal(report.stoppedBy, 'max-duration')
    assert.deepEqual(
      { audited: report.totals.audited, cut: report.totals.cut, notReached: report.totals.notReached },
      { audited: 0, cut: 1, notReached: 1 }
    )

    assert.match(audit.stdout, new RegExp(`^${big} +- +CUT `, 'm'))
    assert.match(audit.stdout, new RegExp(`^${later} +- +skipped `, 'm'))
    assert.match(
      audit.stdout,
      /^PARTIAL: --max-duration ended the pass: 1 cut while read or projected, 1 skipped \(not started\)$/m
    )
    assert.match(readFileSync(markdown, 'utf8'), new RegExp(`^\\| ${big} \\| cut \\|`, 'm'))
  })
})
