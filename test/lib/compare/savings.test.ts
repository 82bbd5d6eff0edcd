import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { savingsVsNone } from '../../../lib/compare/savings.js'
import { sampleReport, SAMPLE_TARGETS } from './sample-report.js'

const GIB = 1024 ** 3
// sampleReport's source: 100 MiB an hour, so 2.34375 GiB a day; replication factor 3, 2 consumer groups.
const INPUT_PER_DAY = 100 * 1024 * 1024 * 24

describe('savingsVsNone', () => {
  it("splits each target's saving against none: x replication factor on disk, x consumer groups in fetch traffic", () => {
    const savings = savingsVsNone(sampleReport())
    assert.equal(savings.ingestBytesPerDay, INPUT_PER_DAY)
    assert.equal(savings.replicationFactor, 3)
    assert.equal(savings.consumers, 2)
    assert.deepEqual(
      savings.targets.map((s) => s.target),
      SAMPLE_TARGETS.map((t) => t.target)
    )
    // zstd:3 stores 10 MiB where none stores 100 MiB: 90% of the input saved.
    assert.deepEqual(
      savings.targets.find((s) => s.target === 'zstd:3'),
      {
        target: 'zstd:3',
        storedBytesPerDaySaved: INPUT_PER_DAY * 0.9 * 3,
        fetchBytesPerDaySaved: INPUT_PER_DAY * 0.9 * 2,
        storedBytesSavedPerGiB: GIB * 0.9 * 3,
        fetchBytesSavedPerGiB: GIB * 0.9 * 2
      }
    )
    assert.deepEqual(
      savings.targets.find((s) => s.target === 'none'),
      {
        target: 'none',
        storedBytesPerDaySaved: 0,
        fetchBytesPerDaySaved: 0,
        storedBytesSavedPerGiB: 0,
        fetchBytesSavedPerGiB: 0
      }
    )
  })

  it("agrees with the recommendation's combined figure: disk plus fetch traffic", () => {
    const report = sampleReport()
    const zstd = savingsVsNone(report).targets.find((s) => s.target === 'zstd:3')
    const perGiB = (zstd?.storedBytesSavedPerGiB ?? 0) + (zstd?.fetchBytesSavedPerGiB ?? 0)
    assert.ok(
      Math.abs(perGiB - (report.recommendation?.bytesSavedPerGiB ?? 0)) < 1e-3 * perGiB,
      `${perGiB} vs ${report.recommendation?.bytesSavedPerGiB}`
    )
  })

  it('no consumer group: no fetch traffic saved; without a rate, per GiB only; without none, nothing', () => {
    const report = sampleReport()
    const unread = savingsVsNone({ ...report, settings: { ...report.settings, consumers: 0 } }).targets.find(
      (s) => s.target === 'zstd:3'
    )
    assert.equal(unread?.fetchBytesPerDaySaved, 0)
    assert.equal(unread?.storedBytesPerDaySaved, INPUT_PER_DAY * 0.9 * 3)

    const noRate = savingsVsNone({ ...report, source: { ...report.source, ingestRate: { unknown: 'no timestamps' } } })
    assert.equal(noRate.ingestBytesPerDay, null)
    const zstd = noRate.targets.find((s) => s.target === 'zstd:3')
    assert.equal(zstd?.storedBytesPerDaySaved, null)
    assert.equal(zstd?.fetchBytesPerDaySaved, null)
    assert.equal(zstd?.fetchBytesSavedPerGiB, GIB * 0.9 * 2)

    const noNone = savingsVsNone(sampleReport(SAMPLE_TARGETS.filter((t) => t.codec !== 'none')))
    assert.ok(
      noNone.targets.every(
        (s) =>
          s.storedBytesPerDaySaved === null &&
          s.fetchBytesPerDaySaved === null &&
          s.storedBytesSavedPerGiB === null &&
          s.fetchBytesSavedPerGiB === null
      )
    )
  })
})
