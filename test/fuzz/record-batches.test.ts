import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import fc from 'fast-check'
import { ErrorCodes } from '../../lib/errors.js'
import { readBatches } from '../helpers/record-batches.js'
import { fuzz, FUZZ_RUNS, mutatedBytes, printTallies, type FuzzTally } from './fuzz-harness.js'
import { codecFor, FUZZ_CODECS, fixCrc, seedBatches } from './fuzz-inputs.js'

const MiB = 1024 * 1024
const done: FuzzTally[] = []
after(() => printTallies('record batch reader', done))

describe('fuzz: readBatches fails only with BATCH_CORRUPT, CODEC_CORRUPT or CODEC_OUTPUT_LIMIT (a 1 MiB cap)', () => {
  for (const spec of FUZZ_CODECS) {
    it(`${spec}: ${FUZZ_RUNS} mutated and random record sets (CRC checked, CRC repaired, CRC off)`, () => {
      const codec = codecFor(spec)
      const seeds = seedBatches(codec, 60)
      // Mutations with the CRC repaired or unchecked reach the decompressor and the record parser.
      const input = fc
        .record({
          data: fc.oneof(
            { weight: 12, arbitrary: mutatedBytes(seeds) },
            { weight: 1, arbitrary: fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b)) }
          ),
          crc: fc.constantFrom('verify', 'repair', 'off')
        })
        .map(({ data, crc }) => {
          if (crc === 'repair') fixCrc(data)
          return { data, verifyCrc: crc !== 'off' }
        })
      const tally = fuzz(
        `readBatches ${spec}`,
        input,
        ({ data, verifyCrc }) => readBatches(data, { verifyCrc, maxUncompressedBytes: MiB }),
        [ErrorCodes.BATCH_CORRUPT, ErrorCodes.CODEC_CORRUPT, ErrorCodes.CODEC_OUTPUT_LIMIT],
        (batches) => {
          for (const b of batches) {
            assert.ok(b.records.length >= 0 && b.storedBytes >= 61 && b.uncompressedBytes <= MiB + 61)
            for (const r of b.records) assert.ok(r.value === null || Buffer.isBuffer(r.value))
          }
        }
      )
      assert.equal(tally.runs, FUZZ_RUNS)
      assert.ok(tally.accepted > 0 && (tally.rejected[ErrorCodes.BATCH_CORRUPT] ?? 0) > 0)
      if (spec !== 'none')
        assert.ok((tally.rejected[ErrorCodes.CODEC_CORRUPT] ?? 0) > 0, 'mutations reached the decompressor')
      done.push(tally)
    })
  }
})
