import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { describe, it } from 'node:test'
import { createCodec } from '../../../lib/codecs/index.js'
import { TopicMeasurements } from '../../../lib/consumer/measure-topics.js'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'
import { checkHttpValues, type CheckHttpValues } from '../../../lib/formats/http-native.js'
import { checkHttpRequestAt } from '../../../lib/formats/http-request-reader.js'
import { formatFor, type LogFormat } from '../../../lib/formats/index.js'
import { createGenerator } from '../../../lib/generators/index.js'
import { Rng } from '../../../lib/generators/random.js'
import { createLogger } from '../../../lib/log/logger.js'
import { buildBatch } from '../../../lib/protocol/record-batch-builder.js'
import { readBatch, type ValueTable } from '../../../lib/protocol/record-batch-reader.js'
import { kindLines } from '../../helpers/corpus.js'

/** The binding itself, for its argument checks; the rest goes through checkHttpValues as the consumer calls it. */
const binding = createRequire(import.meta.url)('squeeze-lz4') as { checkHttpValues: CheckHttpValues }

/** Rows as a record batch's layout has them: offset delta, record start, value start, value end. */
const STRIDE = 4
const START_COLUMN = 2
/** Bytes around each value: a read past a value's bounds reads these, and changes the answer. */
const FILLER = Buffer.alloc(5, 0xa5)

/** The values laid out in one buffer, each between filler bytes, as rows of a table; null for a null value. */
function tableOf(values: readonly (Buffer | null)[]): ValueTable {
  const parts: Buffer[] = [FILLER]
  const table = new Int32Array(values.length * STRIDE).fill(-7)
  let at = FILLER.length
  values.forEach((value, i) => {
    if (value === null) {
      table[i * STRIDE + START_COLUMN] = -1
      table[i * STRIDE + START_COLUMN + 1] = -1
      return
    }
    table[i * STRIDE + START_COLUMN] = at
    table[i * STRIDE + START_COLUMN + 1] = at + value.length
    parts.push(value, FILLER)
    at += value.length + FILLER.length
  })
  return { bytes: Buffer.concat(parts), table, count: values.length, stride: STRIDE, startColumn: START_COLUMN }
}

/** What the TypeScript check, the definition, makes of row `i`: true when it reads it, false for DECODE_RECORD. */
function tsReads(values: ValueTable, i: number): boolean {
  const start = values.table[i * STRIDE + START_COLUMN] as number
  const end = values.table[i * STRIDE + START_COLUMN + 1] as number
  try {
    checkHttpRequestAt(values.bytes, start, end)
    return true
  } catch (err) {
    if (err instanceof SqueezeError && err.code === ErrorCodes.DECODE_RECORD) return false
    throw err
  }
}

/** checkHttpValues's flags for the table, copied (the next call reuses them). */
function flags(values: ValueTable): number[] {
  const done = checkHttpValues(values)
  assert.ok(done !== null, 'this build has the native check')
  return Array.from(done.subarray(0, values.count))
}

function generated(n: number, seed = 3): Buffer[] {
  const gen = createGenerator('http', { seed })
  return Array.from({ length: n }, () => gen.next().value)
}

function corpusRecords(): Buffer[] {
  const format = formatFor('http')
  return kindLines('http').flatMap((line) => {
    try {
      return [format.encodeLine(line)]
    } catch {
      return []
    }
  })
}

/** A valid message edited at random: bytes and words overwritten, pointers bent, the segment size changed, cut short. */
function mutated(value: Buffer, rng: Rng): Buffer {
  const out = Buffer.from(value)
  switch (rng.int(5)) {
    case 0:
      for (let k = 1 + rng.int(4); k > 0; k--) out[rng.int(out.length)] = rng.int(256)
      return out
    case 1: {
      // A pointer or data word of the struct replaced: kinds, offsets and counts out of range.
      const at = 8 + rng.int((out.length - 8) / 8) * 8
      out.writeUInt32LE(rng.int(2 ** 32), at)
      if (rng.chance(0.5)) out.writeUInt32LE(rng.int(2 ** 32), at + 4)
      return out
    }
    case 2: {
      // A text pointer's element count or offset nudged, so the text ends past the segment or without its NUL.
      const at = 16 + 48 + rng.int(14) * 8
      if (at + 8 > out.length) return out
      if (rng.chance(0.5)) out.writeUInt32LE((out.readUInt32LE(at + 4) + ((rng.int(9) - 4) << 3)) >>> 0, at + 4)
      else out.writeUInt32LE((out.readUInt32LE(at) + ((rng.int(9) - 4) << 2)) >>> 0, at)
      return out
    }
    case 3:
      out.writeUInt32LE(rng.int(out.length / 8 + 4), 4)
      return out
    default:
      return out.subarray(0, rng.int(out.length))
  }
}

describe('checkHttpValues: the native check of a batch of HttpRequest values reads only what the TypeScript check reads', () => {
  it('reads every generated and corpus record in one call', () => {
    const values = tableOf([...generated(500), ...corpusRecords()])
    assert.ok(values.count > 500)
    assert.deepEqual(
      flags(values),
      Array.from({ length: values.count }, () => 1)
    )
  })

  it('mutated records: each one it reads, the TypeScript reads; each one the TypeScript refuses is left to it', () => {
    const rng = new Rng(20261203)
    const seeds = generated(50, 11)
    let read = 0
    let refused = 0
    for (let round = 0; round < 40; round++) {
      const values = tableOf(Array.from({ length: 100 }, () => mutated(seeds[rng.int(seeds.length)] as Buffer, rng)))
      const done = flags(values)
      for (let i = 0; i < values.count; i++) {
        const ts = tsReads(values, i)
        if (done[i] === 1) assert.ok(ts, `row ${i} of round ${round}: read natively, refused by the TypeScript`)
        if (done[i] === 1) read++
        if (!ts) refused++
      }
    }
    // Both outcomes were reached: the mutations neither all broke the messages nor all left them whole.
    assert.ok(read > 400, `${read} mutated records read`)
    assert.ok(refused > 400, `${refused} mutated records refused`)
  })

  it('leaves two-segment messages and far pointers to the TypeScript, and reads null roots', () => {
    const [value] = generated(1) as [Buffer]
    const twoSegments = Buffer.concat([
      Buffer.from([1, 0, 0, 0]),
      value.subarray(4, 8),
      Buffer.alloc(8),
      value.subarray(8)
    ])
    twoSegments.writeUInt32LE(0, 8) // the second segment is empty
    const far = Buffer.from(value)
    far.writeUInt32LE(2, 16 + 48) // text 0 through a far pointer
    const nullRoot = Buffer.from([0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    const values = tableOf([twoSegments, far, nullRoot, value])
    assert.deepEqual(flags(values), [0, 0, 1, 1])
    assert.ok(tsReads(values, 2) && tsReads(values, 3))
  })

  it('leaves null values without counting them, and values past the bytes without reading them', () => {
    const [value] = generated(1) as [Buffer]
    const values = tableOf([null, value, value])
    values.table[2 * STRIDE + START_COLUMN + 1] = values.bytes.length + 1
    const done = new Uint8Array(3).fill(9)
    const left = binding.checkHttpValues(values.bytes, values.table, 3, STRIDE, START_COLUMN, 0x3fff, 48, done)
    assert.deepEqual(Array.from(done), [0, 1, 0])
    assert.equal(left, 1, 'the value past the bytes is left; the null one is not counted')
  })

  it('refuses arguments out of bounds instead of reading or writing past them', () => {
    const values = tableOf(generated(2))
    const done = new Uint8Array(2)
    const call = (...args: unknown[]): number => (binding.checkHttpValues as (...a: unknown[]) => number)(...args)
    const ok = [values.bytes, values.table, 2, STRIDE, START_COLUMN, 0x3fff, 48, done]
    assert.equal(call(...ok), 0)
    const bad = (index: number, arg: unknown, what: string): void =>
      assert.throws(() => call(...ok.map((a, i) => (i === index ? arg : a))), TypeError, what)
    bad(0, [1, 2, 3], 'bytes not a Uint8Array')
    bad(1, new Uint32Array(8), 'a table not of int32s')
    bad(2, 3, 'more rows than the table holds')
    bad(2, -1, 'a negative count')
    bad(3, 0, 'a zero stride')
    bad(4, 3, 'a start column without its end column in the row')
    bad(5, 2 ** 32, 'a mask wider than 32 pointers')
    bad(7, new Uint8Array(1), 'done shorter than the rows')
    bad(7, new Int8Array(2), 'done not a Uint8Array')
    assert.throws(() => call(values.bytes, values.table, 2), TypeError, 'too few arguments')
  })

  it('the consumer counts the same corrupt records with the native check and without it, past a fetch offset too', () => {
    const good = generated(6)
    const [a, b, c, d, e, f] = good as [Buffer, Buffer, Buffer, Buffer, Buffer, Buffer]
    const values = [a, a.subarray(0, 20), null, b, Buffer.from('not a message at all'), c, d, e, f]
    const records = values.map((value) => ({ key: null, value, headers: [] }))
    const batch = buildBatch(records, createCodec({ codec: 'zstd', level: 3 })).bytes
    const log = createLogger({ level: 'silent', name: 'http-values-test' })
    const native = formatFor('http')
    const typescriptOnly: LogFormat = { ...native, decodeValues: undefined }
    const measure = (format: LogFormat, fromOffset: number): { records: number; corrupt: number } => {
      const measurements = new TopicMeasurements(() => format, log)
      const read = readBatch(Buffer.from(batch), { fromOffset })
      measurements.onBatch({ topic: 't', partition: 0, batch: read, framingCpuSeconds: 0 })
      const m = measurements.get('t')
      return { records: m.records, corrupt: m.corruptRecords }
    }
    assert.deepEqual(measure(native, 0), { records: 9, corrupt: 2 })
    assert.deepEqual(measure(typescriptOnly, 0), { records: 9, corrupt: 2 })
    assert.deepEqual(
      measure(native, 2),
      { records: 7, corrupt: 1 },
      'the cut record before the fetch offset is not counted'
    )
    assert.deepEqual(measure(typescriptOnly, 2), { records: 7, corrupt: 1 })
  })
})
