import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'

const STRESS = fileURLToPath(new URL('../../helpers/codec-thread-stress.js', import.meta.url))
const lz4 = createRequire(import.meta.url)('squeeze-lz4') as {
  frameBound(length: number): number
  compressFrame(input: Uint8Array, output: Uint8Array, level: number): number
}

interface StressCounts {
  readonly roundTrips: number
  readonly corruptRefused: number
  readonly transferred: number
}

/** The stress script in a process of its own: a native crash there ends that process with a signal, reported here. */
function stress(specs: string, rounds: number, threads: number): Promise<StressCounts> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [STRESS, String(rounds), String(threads), specs],
      { timeout: 240_000 },
      (err, stdout, stderr) => {
        if (err !== null) {
          const how = err.killed
            ? 'timed out after 240 s'
            : err.signal !== null && err.signal !== undefined
              ? `killed by ${err.signal}`
              : `exit code ${String(err.code)}`
          reject(new Error(`codec thread stress (${specs}) ${how}:\n${stderr.slice(-2000)}`))
          return
        }
        resolve(JSON.parse(stdout) as StressCounts)
      }
    )
  })
}

describe('native codecs on worker threads terminated mid-call', () => {
  // 20 rounds (snappy 10) of 3 threads: each ended by terminate() while it compresses, decompresses or transfers a frame.
  it('squeeze-lz4 (fast and HC state per thread): no crash, round trips intact, corrupt frames and lying sizes refused', async () => {
    const counts = await stress('lz4:1,lz4:9,lz4:12', 20, 3)
    assert.ok(counts.roundTrips > 0 && counts.corruptRefused > 0 && counts.transferred > 0, JSON.stringify(counts))
  })

  it('snappy: no crash, round trips intact, corrupt frames refused', async () => {
    const counts = await stress('snappy', 10, 3)
    assert.ok(counts.roundTrips > 0 && counts.corruptRefused > 0 && counts.transferred > 0, JSON.stringify(counts))
  })
})

describe('squeeze-lz4 sizes', () => {
  it('frameBound takes byte counts only: NaN, Infinity, 2^64, fractions and negatives throw instead of a wrapped-around bound', () => {
    for (const bad of [NaN, Infinity, 2 ** 64, 2 ** 53, 2.5, -1])
      assert.throws(() => lz4.frameBound(bad), TypeError, `frameBound(${bad})`)
    // Header 7, end mark 4, and 4 per 64 KiB block.
    assert.deepEqual(
      [0, 65_536, 65_537, 2 ** 40].map((n) => lz4.frameBound(n)),
      [11, 65_551, 65_556, 2 ** 40 + 4 * 2 ** 24 + 11]
    )
    assert.throws(
      () => lz4.compressFrame(Buffer.alloc(65_537), Buffer.alloc(65_555), 1),
      /output is shorter than frameBound/
    )
  })
})
