import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { PassEnd } from '../../lib/audit/pass-end.js'
import { runAudit } from '../../lib/audit/run-audit.js'
import { DEFAULT_TARGETS } from '../../lib/copier/targets.js'
import { ErrorCodes, type SqueezeError } from '../../lib/errors.js'
import { createGenerator } from '../../lib/generators/index.js'
import { createLogger } from '../../lib/log/logger.js'
import { RECENT_MS, useTestKafka } from '../helpers/kafka.js'

const kafka = useTestKafka()
const MIB = 1024 * 1024
const BIG_BYTES = 16 * MIB

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

describe('squeeze audit: a pass ended early (--max-duration or Ctrl-C)', () => {
  it('cuts the topic in flight where it stands, lists the topics not started, and marks the report partial', async (t) => {
    const run = `deadline-${Date.now().toString(36)}`
    const big = await kafka.createTopic(t, { name: `${run}-a-big`, partitions: 3 })
    const later = await kafka.createTopic(t, { name: `${run}-b-later`, partitions: 1 })
    const bigBytes = await fill(big, BIG_BYTES, 3)
    await fill(later, 256 * 1024, 1)
    // The pass ends as the first bytes of the first topic arrive: the cut lands in its read, whatever the machine's
    // speed. One thread: the topics run one after the other in name order.
    const interrupt = new AbortController()
    const report = await runAudit({
      connection: kafka.connection,
      selection: { topics: new RegExp(`^${run}-`), exclude: null },
      targets: DEFAULT_TARGETS.join(','),
      sampleBytes: 256 * MIB,
      threads: 1,
      batching: { lingerMs: 100, batchSizeBytes: 1024 * 1024 },
      prices: null,
      version: 'test',
      log: createLogger({ level: 'warn', name: 'audit-deadline' }),
      signal: interrupt.signal,
      progress: {
        begin: () => undefined,
        read: (bytes) => {
          if (bytes > 0) interrupt.abort()
        },
        topicDone: () => undefined
      }
    })
    const row = (topic: string) => report.topics.find((x) => x.topic === topic) ?? assert.fail(`${topic} missing`)
    const cut = row(big)
    assert.equal(cut.status, 'cut', `${big}: ${cut.error}`)
    assert.match(cut.error ?? '', /^cut: the pass was interrupted \(\d+\.\d MiB of its sample read\)$/)
    assert.ok(cut.cutAfterBytes !== undefined && cut.cutAfterBytes <= bigBytes, `read ${cut.cutAfterBytes}`)
    assert.equal(cut.verdict, null, 'a cut topic has no verdict')
    assert.deepEqual(cut.targets, [])
    assert.equal(row(later).status, 'not-reached')
    assert.equal(report.partial, true)
    assert.equal(report.stoppedBy, 'interrupt')
    assert.deepEqual(
      { audited: report.totals.audited, cut: report.totals.cut, notReached: report.totals.notReached },
      { audited: 0, cut: 1, notReached: 1 }
    )
  })

  it('--max-duration ends the pass with a RUN_CUT error that names it', async () => {
    const end = new PassEnd(20, undefined)
    await new Promise<void>((resolve) => end.signal.addEventListener('abort', () => resolve(), { once: true }))
    end.dispose()
    assert.equal(end.endedBy, 'max-duration')
    const reason = end.signal.reason as SqueezeError
    assert.deepEqual([reason.code, reason.message], [ErrorCodes.RUN_CUT, 'cut: --max-duration (0.02 s) ended the pass'])
  })
})
