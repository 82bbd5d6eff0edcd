import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { createCodec, parseCodecSpec } from '../../lib/codecs/index.js'
import type { CompareReportJson } from '../../lib/report/compare-json.js'
import { formatFor } from '../../lib/formats/index.js'
import { BATCH } from '../../lib/protocol/batch-layout.js'
import { buildBatch } from '../../lib/protocol/record-batch-builder.js'
import { useTestKafka } from '../helpers/kafka.js'
import { runSqueeze } from '../helpers/squeeze-cli.js'

// A file of its own: compare.test.ts alone already takes most of a test file's 300 s budget on a busy machine.
const kafka = useTestKafka()

describe('squeeze compare CPU figures', () => {
  it('reports compress, decompress and decode CPU near what the test measures calling the codec and decoder itself', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-compare-'))
    const specs = ['none', 'gzip:6', 'lz4:1', 'zstd:3']
    // 40,000 generated HTTP records (~20 MB): gzip compresses them in about 400 ms, lz4 decompresses them in
    // about 10. With 20,000, one CI run read gzip:6 decode at 11.8x the test's figure: the report's process decodes
    // each topic once, its first batches before the JIT has warmed up, and fixed costs like that (or a GC pause)
    // weigh half as much over twice the records. Linux counts a task's CPU time in nanoseconds (only its user/system split is sampled per tick, and
    // the figures add both), so the smallest figure is still a sum of exact per-batch readings.
    const result = await runSqueeze([
      'compare',
      '--brokers',
      kafka.broker.brokers.join(','),
      '--source',
      'generate',
      '--kind',
      'http',
      '--records',
      '40000',
      '--targets',
      specs.join(','),
      '--keep-topics',
      '--json',
      join(dir, 'r.json'),
      '--log-level',
      'error'
    ])
    assert.equal(result.code, 0, result.stderr)
    const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as CompareReportJson
    t.after(() =>
      kafka.admin
        .deleteTopics({ topics: [report.source.topic, ...report.targets.map((r) => r.topic)] })
        .catch(() => undefined)
    )
    const none = report.targets.find((r) => r.target === 'none')
    assert.ok(none !== undefined)

    // The same records, batched as the copier batched them for `none`, run through each codec and the decoder here.
    const none0 = createCodec({ codec: 'none', level: null })
    const batches = (await kafka.readAll([none.topic])).map(({ batch }) => batch)
    const sections = batches.map((batch) => buildBatch(batch.records, none0).bytes.subarray(BATCH.HEADER_BYTES))
    const gib = sections.reduce((n, s) => n + BATCH.HEADER_BYTES + s.length, 0) / 1024 ** 3
    // The least of five runs: on a busy 2-core machine the CPU time of one gunzip pass over these 10 MB ranged
    // from 18 to 155 ms (shared cores and caches, GC threads, fresh pages), and contention only ever adds time.
    const cpuOf = (work: () => void): number => {
      let least = Number.POSITIVE_INFINITY
      for (let run = 0; run < 5; run++) {
        const before = process.cpuUsage()
        work()
        const spent = process.cpuUsage(before)
        least = Math.min(least, (spent.user + spent.system) / 1e6)
      }
      return least
    }
    const http = formatFor('http')
    const values = batches.flatMap((batch) => batch.records.map((r) => r.value ?? Buffer.alloc(0)))
    const decodeAll = (): void => {
      for (const v of values) http.decode(v)
    }
    const decodePerGiB = cpuOf(decodeAll) / gib

    // A factor of 10 either way: the report's figures come from another process (its own JIT and GC, process-wide
    // CPU per call, a reader that decompresses into a reused buffer, decode including record framing), and on a
    // busy 2-core machine they landed between 1.0x and 4.5x of the test's. The errors this catches are larger:
    // a figure of 0, a wrong unit (ms or us: 1000x), or a figure taken from another codec's or step's timer.
    const near = (what: string, reported: number, measured: number): void => {
      t.diagnostic(
        `${what}: report ${reported.toFixed(4)}, test ${measured.toFixed(4)} CPU s/GiB (x${(reported / measured).toFixed(2)})`
      )
      assert.ok(reported > 0 && measured > 0, `${what}: report ${reported}, test ${measured}`)
      assert.ok(
        reported <= measured * 10 && reported >= measured / 10,
        `${what}: report ${reported} vs test ${measured} CPU s/GiB`
      )
    }
    for (const target of report.targets) {
      near(`${target.target} decode`, target.decodeCpuSecondsPerGiB, decodePerGiB)
      if (target.codec === 'none') continue
      const codec = createCodec(parseCodecSpec(target.target))
      const compressed = sections.map((s) => codec.compress(s))
      const compressCpu = cpuOf(() => {
        for (const s of sections) codec.compress(s)
      })
      // Into one reused buffer where the codec can, as compare's reader does: a fresh 1 MiB per batch costs
      // page faults that are not decompression.
      const into = Buffer.alloc(2 * 1024 * 1024)
      const decompressCpu = cpuOf(() => {
        for (const c of compressed)
          if (codec.decompressInto === undefined || codec.decompressInto(c, into) < 0) codec.decompress(c)
      })
      near(`${target.target} compress`, target.compressCpuSecondsPerGiB, compressCpu / gib)
      near(`${target.target} decompress`, target.decompressCpuSecondsPerGiB, decompressCpu / gib)
    }
  })
})
