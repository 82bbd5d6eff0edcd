import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { ErrorCodes } from '../../lib/errors.js'
import { LOG_KINDS } from '../../lib/formats/index.js'
import { BATCH } from '../../lib/protocol/batch-layout.js'
import { readBatch } from '../../lib/protocol/record-batch-reader.js'
import { bytesInput, fuzz, FUZZ_RUNS, printTallies, type FuzzTally } from './fuzz-harness.js'

/**
 * The output cap every fuzzed decompress runs under: far above what these small frames hold, far below what a
 * mutated size field can claim, so a claim past it must be refused (CODEC_OUTPUT_LIMIT), never allocated.
 */
const FUZZ_OUTPUT_CAP = 1024 * 1024
import { batchAround, codecFor, encodedRecords, FUZZ_CODECS } from './fuzz-inputs.js'

const done: FuzzTally[] = []
after(() => printTallies('codec decompress', done))

/** Small real payloads (a few encoded records each), compressed by every codec: each codec also sees the others' frames. */
function compressedSeeds(): Map<string, Buffer[]> {
  const records = LOG_KINDS.flatMap((k) => encodedRecords(k, 10))
  const payloads = Array.from({ length: 30 }, (_, i) =>
    Buffer.concat(records.slice(i % records.length, (i % records.length) + 1 + (i % 4)))
  )
  return new Map(FUZZ_CODECS.map((spec) => [spec, payloads.map((p) => codecFor(spec).compress(p))]))
}

describe('fuzz: codec decompress stays within its output cap, or throws an Error (never crashes or hangs); a batch reports CODEC_CORRUPT or CODEC_OUTPUT_LIMIT', () => {
  const seeds = compressedSeeds()
  for (const spec of FUZZ_CODECS) {
    it(`${spec}: ${FUZZ_RUNS} mutated frames, other codecs' frames and random bytes`, () => {
      const codec = codecFor(spec)
      const own = seeds.get(spec) as Buffer[]
      const others = [...seeds.entries()].filter(([s]) => s !== spec).flatMap(([, list]) => list.slice(0, 4))
      const tally = fuzz(
        `decompress ${spec}`,
        bytesInput([...own, ...own, ...others]),
        (input) => {
          let direct: Buffer | undefined
          let failure: unknown
          try {
            direct = codec.decompress(input, FUZZ_OUTPUT_CAP)
          } catch (err) {
            failure = err
          }
          if (failure !== undefined) {
            assert.ok(failure instanceof Error, `decompress threw a non-Error: ${String(failure)}`)
            assert.ok(
              !(failure instanceof TypeError) && !(failure instanceof ReferenceError),
              `decompress hit a programming error: ${failure.stack}`
            )
          }
          // The same bytes as a fetched batch body: a failure must surface as CODEC_CORRUPT or CODEC_OUTPUT_LIMIT.
          const batch = readBatch(batchAround(codec.id, input), { maxUncompressedBytes: FUZZ_OUTPUT_CAP })
          assert.ok(direct !== undefined, 'readBatch accepted a body that decompress rejects')
          assert.ok(
            direct.length <= FUZZ_OUTPUT_CAP,
            `${direct.length} bytes out of ${input.length} passed the ${FUZZ_OUTPUT_CAP}-byte cap`
          )
          assert.equal(batch.uncompressedBytes, BATCH.HEADER_BYTES + direct.length)
          return direct
        },
        [ErrorCodes.CODEC_CORRUPT, ErrorCodes.CODEC_OUTPUT_LIMIT]
      )
      assert.equal(tally.runs, FUZZ_RUNS)
      assert.ok(tally.accepted > 0)
      if (spec !== 'none') assert.ok((tally.rejected[ErrorCodes.CODEC_CORRUPT] ?? 0) > 0)
      done.push(tally)
    })
  }
})
