import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { Registry } from 'prom-client'
import { formatFor } from '../../../lib/formats/index.js'
import { createSourceMetrics } from '../../../lib/metrics/source-metrics.js'
import { shipFiles, type PositionSink } from '../../../lib/pipeline/ship-files.js'
import type { Producer } from '../../../lib/producer/producer.js'
import { FileSet, type FilePosition } from '../../../lib/sources/file-set.js'
import { PositionStore } from '../../../lib/sources/position-store.js'
import { useTestKafka } from '../../helpers/kafka.js'
import { poll } from '../../helpers/poll.js'
import { appendLines, logLine, valueCounts } from '../../helpers/shipper.js'

const kafka = useTestKafka()
const LINES = 5000
const LINE_BYTES = logLine('app', 0).length + 1
/** Longer than the test runs: no save in it can come from the timer. */
const NEVER_MS = 3_600_000

/** The state file as a SIGKILL would leave it: whatever was on disk then. */
function savedOffset(store: PositionStore): number {
  try {
    const state = JSON.parse(readFileSync(store.path, 'utf8')) as { files: FilePosition[] }
    return Math.max(0, ...state.files.map((f) => f.offset))
  } catch {
    return 0
  }
}

/** A state file that, at each save, checks the producer has acknowledged the record of every line it covers. */
function checkedStore(store: PositionStore, producer: Producer, ahead: number[]): PositionSink {
  return {
    async save(positions) {
      const lines = Math.max(0, ...positions.map((p) => p.offset)) / LINE_BYTES
      if (lines > producer.snapshot().recordsAcked) ahead.push(lines)
      await store.save(positions)
    },
    ageSeconds: () => store.ageSeconds()
  }
}

function ship(files: FileSet, topic: string, producer: Producer, positions: PositionSink, saved: FilePosition[]) {
  return shipFiles({
    files,
    topic,
    producer,
    formatFor: () => formatFor('syslog'),
    onParseError: 'skip',
    headers: { file: false, host: null },
    positions,
    saved,
    checkpointMs: NEVER_MS,
    log: kafka.log,
    metrics: createSourceMetrics(new Registry()),
    ready: Promise.resolve()
  })
}

describe('shipFiles: read positions, at least once', () => {
  it('positions are saved as the records are acknowledged, not on a timer: a crash after that resends no line', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-ship-files-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const path = join(dir, 'app.log')
    appendLines(path, 'app', 0, LINES)
    const topic = await kafka.createTopic(t)
    const store = new PositionStore(join(dir, 'state'), 'test')
    const ahead: number[] = []

    // Small batches, the last of which lingers well after the others are acknowledged: a save must wait for it.
    const producer = await kafka.startProducer({ lingerMs: 1000, batchSizeBytes: 16 * 1024 })
    t.after(() => producer.close())
    const stop = new AbortController()
    const patterns = [{ glob: path, kind: 'syslog' }]
    const files = new FileSet({ patterns, follow: true, pollMs: 50, log: kafka.log, signal: stop.signal })
    const running = ship(files, topic, producer, checkedStore(store, producer, ahead), [])
    // The timer never fires here, and the file does not change: only acknowledgements can move the saved offset.
    await poll(
      'the records acknowledged',
      async () => producer.snapshot().recordsAcked,
      (n) => n >= LINES,
      60_000
    )
    await poll(
      'the state file to cover every acknowledged line',
      async () => savedOffset(store),
      (offset) => offset === statSync(path).size,
      60_000
    )
    // What a SIGKILL now leaves: the state file as it is. The run is then stopped and its own last save undone.
    const atKill = readFileSync(store.path)
    stop.abort()
    await running
    writeFileSync(store.path, atKill)
    assert.deepEqual(ahead, [], 'no save covered lines whose records were not acknowledged')

    const restarted = await kafka.startProducer({ lingerMs: 5 })
    t.after(() => restarted.close())
    const saved = await store.load()
    const again = new FileSet({ patterns, follow: false, saved, log: kafka.log })
    const summary = await ship(again, topic, restarted, store, saved)
    assert.equal(summary.itemsRead, 0, 'the restart reads no line again')
    const counts = await valueCounts(kafka, topic)
    assert.equal(counts.size, LINES)
    assert.deepEqual(
      [...counts.values()].filter((n) => n !== 1),
      [],
      'every line once'
    )
  })
})
