import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { ErrorCodes } from '../../lib/errors.js'
import { LOG_KINDS } from '../../lib/formats/index.js'
import { BATCH } from '../../lib/protocol/batch-layout.js'
import { readBatch } from '../../lib/protocol/record-batch-reader.js'
import { bytesInput, fuzz, FUZZ_RUNS, printTallies, type FuzzTally } from './fuzz-harness.js'
import { batchAround, codecFor, encodedRecords, FUZZ_CODECS } from './fuzz-inputs.js'

const done: FuzzTally[] = []
after(() => printTallies('codec decompress', done))

/** Small real payloads (a few encoded records each), compressed by every codec: each codec also sees the others' frames. */
function compressedSeeds(): Map<string, Buffer[]> {
  const records = LOG_KINDS.flatMap((k) => encodedRecords(k, 10))
  const payloads = Array.from({ length: 30 }, (_, i) => Buffer.concat(records.slice(i % records.length, (i % records.length) + 1 + (i % 4))))
  return new Map(FUZZ_CODECS.map((spec) => [spec, payloads.map((p) => codecFor(spec).compress(p))]))
}

describe('fuzz: codec decompress throws an Error (never crashes or hangs); a batch reports it as CODEC_CORRUPT', () => {
  const seeds = compressedSeeds()
  for (const spec of FUZZ_CODECS) {
    it(`${spec}: ${FUZZ_RUNS} mutated frames, other codecs' frames and random bytes`, () => {
      const codec = codecFor(spec)
      const own = seeds.get(spec) as Buffer[]
      const others = [...seeds.entries()].filter(([s]) => s !== spec).flatMap(([, list]) => list.slice(0, 4))
      const tally = fuzz(`decompress ${spec}`, bytesInput([...own, ...own, ...others]), (input) => {
        let direct: Buffer | undefined
        let failure: unknown
        try {
          direct = codec.decompress(input)
        } catch (err) {
          failure = err
        }
        if (failure !== undefined) {
          assert.ok(failure instanceof Error, `decompress threw a non-Error: ${String(failure)}`)
          assert.ok(!(failure instanceof TypeError) && !(failure instanceof ReferenceError), `decompress hit a programming error: ${failure.stack}`)
        }
        // The same bytes as a fetched batch body: a failure must surface as CODEC_CORRUPT.
        const batch = readBatch(batchAround(codec.id, input))
        assert.ok(direct !== undefined, 'readBatch accepted a body that decompress rejects')
        assert.equal(batch.uncompressedBytes, BATCH.HEADER_BYTES + direct.length)
        return direct
      }, [ErrorCodes.CODEC_CORRUPT])
      assert.equal(tally.runs, FUZZ_RUNS)
      assert.ok(tally.accepted > 0)
      if (spec !== 'none') assert.ok((tally.rejected[ErrorCodes.CODEC_CORRUPT] ?? 0) > 0)
      done.push(tally)
    })
  }
})
