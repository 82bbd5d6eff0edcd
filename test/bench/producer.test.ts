import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { CeilingRow } from '../../bench/codec-ceiling.js'
import { compressionPathNote, type ProducerRow } from '../../bench/producer.js'

const row: ProducerRow = {
  peer: 'squeeze',
  input: 'corpus',
  target: 'zstd:3',
  runs: 3,
  recordsPerSecond: 1,
  perRun: [1, 1, 1],
  mbPerSecond: 1,
  cpuSecondsPerGb: 1,
  maxRssMb: 1,
  storedBytes: 1,
  ratio: 1,
  meanBatchKb: 900,
  compressMBps: 427,
  compressCeilingMBps: 450,
  compressVsCeiling: 0.95
}

const ceiling: CeilingRow = {
  input: 'corpus',
  target: 'zstd:3',
  batches: 47,
  ratio: 8.85,
  libCompressMBps: 534,
  libDecompressMBps: 951,
  cliCompressMBps: 563,
  cliDecompressMBps: 1801,
  cliRatio: 8.84
}

it('the compression path is stated against the library on the same batches, and against the ceiling section', () => {
  assert.equal(
    compressionPathNote(row, ceiling),
    "corpus zstd:3 427 MB/s per CPU s = 95% of the library on the same batches (450 MB/s), 80% of the ceiling section's"
  )
})

it('a run without the same-batches figure says so instead of a number', () => {
  const { compressCeilingMBps: _c, compressVsCeiling: _v, ...without } = row
  assert.match(compressionPathNote(without, undefined), /= - of the library on the same batches \(n\/a MB\/s\), - of/)
})
