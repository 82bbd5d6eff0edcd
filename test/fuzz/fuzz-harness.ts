/**
 * Shared machinery of the fuzz suite: mutation of real inputs (flip, set, truncate, insert, splice, duplicate),
 * one fc.assert per target with at least 10,000 runs, and a per-target tally of accepted inputs and
 * rejections by error code. A target passes when every call either returns or throws a SqueezeError with
 * one of the codes its contract documents; anything else (TypeError, RangeError, a plain Error, a hang,
 * a crashed process) fails the suite with fast-check's shrunk counterexample.
 */
import fc from 'fast-check'
import { SqueezeError } from '../../lib/errors.js'

export const FUZZ_RUNS = 10_000
/** Fixed by default so a CI failure can be replayed; SQUEEZE_FUZZ_SEED explores other inputs. */
export const FUZZ_SEED = Number(process.env.SQUEEZE_FUZZ_SEED ?? 20_250_611)

export interface FuzzTally {
  readonly target: string
  runs: number
  accepted: number
  rejected: Record<string, number>
  slowestCallMs: number
  /** The input of the slowest call, for a report when something looks slow. */
  slowestInput?: unknown
}

export const tallies: FuzzTally[] = []

/**
 * Runs `call` on FUZZ_RUNS generated inputs. `check` may add a property about an accepted input's result
 * (for example: whatever encodeLine accepts, decode reads back).
 */
export function fuzz<T, R>(
  target: string,
  input: fc.Arbitrary<T>,
  call: (value: T) => R,
  allowedCodes: readonly string[],
  check?: (result: R, value: T) => void
): FuzzTally {
  const tally: FuzzTally = { target, runs: 0, accepted: 0, rejected: {}, slowestCallMs: 0 }
  fc.assert(
    fc.property(input, (value) => {
      const started = performance.now()
      let result: R
      try {
        result = call(value)
      } catch (err) {
        if (!(err instanceof SqueezeError) || !allowedCodes.includes(err.code)) throw err
        tally.runs++
        tally.rejected[err.code] = (tally.rejected[err.code] ?? 0) + 1
        return
      } finally {
        const ms = performance.now() - started
        if (ms > tally.slowestCallMs) {
          tally.slowestCallMs = ms
          tally.slowestInput = value
        }
      }
      check?.(result, value)
      tally.runs++
      tally.accepted++
    }),
    { numRuns: FUZZ_RUNS, seed: FUZZ_SEED }
  )
  tallies.push(tally)
  return tally
}

export function printTallies(title: string, list: readonly FuzzTally[]): void {
  const lines = list.map((t) => {
    const codes = Object.entries(t.rejected)
      .map(([code, n]) => `${code.replace('SQUEEZE_ERR_', '')}=${n}`)
      .join(' ')
    return `#   ${t.target.padEnd(34)} runs=${t.runs} accepted=${t.accepted} rejected=${t.runs - t.accepted}${codes === '' ? '' : ` (${codes})`} slowest=${t.slowestCallMs.toFixed(1)}ms`
  })
  console.log(`# fuzz ${title} (seed ${FUZZ_SEED})\n${lines.join('\n')}`)
}

// ---------------------------------------------------------------------------------------------------------------
// Mutations

export type Mutation =
  | { op: 'flip'; at: number; bit: number }
  | { op: 'set'; at: number; byte: number }
  | { op: 'truncate'; at: number }
  | { op: 'insert'; at: number; bytes: Uint8Array }
  | { op: 'splice'; at: number; donor: number; from: number; length: number }
  | { op: 'duplicate'; at: number; length: number }
  | { op: 'delete'; at: number; length: number }

/** Bytes that sit on boundaries: varint continuation, sign bits, quotes and brackets, NUL, UTF-8 lead bytes. */
const INTERESTING = [
  0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x22, 0x20, 0x5b, 0x5d, 0x2d, 0x0a, 0x09, 0x5c, 0xc3, 0xe2, 0xf0, 0x30, 0x39
]

const position = fc.nat({ max: 0xffff })
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant('flip' as const), at: position, bit: fc.integer({ min: 0, max: 7 }) })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('set' as const),
      at: position,
      byte: fc.oneof(fc.constantFrom(...INTERESTING), fc.integer({ min: 0, max: 255 }))
    })
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('truncate' as const), at: position }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('insert' as const),
      at: position,
      bytes: fc.uint8Array({ minLength: 1, maxLength: 8 })
    })
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('splice' as const),
      at: position,
      donor: fc.nat(),
      from: position,
      length: fc.integer({ min: 1, max: 64 })
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('duplicate' as const),
      at: position,
      length: fc.integer({ min: 1, max: 32 })
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('delete' as const), at: position, length: fc.integer({ min: 1, max: 32 }) })
  }
)

export function applyMutations(
  base: Uint8Array,
  mutations: readonly Mutation[],
  donors: readonly Uint8Array[]
): Buffer {
  let bytes = Buffer.from(base)
  for (const m of mutations) {
    const at = bytes.length === 0 ? 0 : m.at % (bytes.length + (m.op === 'insert' || m.op === 'splice' ? 1 : 0))
    switch (m.op) {
      case 'flip':
        if (bytes.length > 0) bytes[at % bytes.length] = (bytes[at % bytes.length] as number) ^ (1 << m.bit)
        break
      case 'set':
        if (bytes.length > 0) bytes[at % bytes.length] = m.byte
        break
      case 'truncate':
        bytes = bytes.subarray(0, at)
        break
      case 'insert':
        bytes = Buffer.concat([bytes.subarray(0, at), m.bytes, bytes.subarray(at)])
        break
      case 'splice': {
        const donor = donors.length === 0 ? bytes : (donors[m.donor % donors.length] as Uint8Array)
        const from = donor.length === 0 ? 0 : m.from % donor.length
        bytes = Buffer.concat([bytes.subarray(0, at), donor.subarray(from, from + m.length), bytes.subarray(at)])
        break
      }
      case 'duplicate':
        bytes = Buffer.concat([
          bytes.subarray(0, at + m.length),
          bytes.subarray(at, at + m.length),
          bytes.subarray(at + m.length)
        ])
        break
      case 'delete':
        bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + m.length)])
        break
    }
  }
  return bytes
}

/** 1-4 mutations of one of `seeds` (real inputs), with other seeds as splice donors. */
export function mutatedBytes(seeds: readonly Uint8Array[]): fc.Arbitrary<Buffer> {
  return fc
    .record({ seed: fc.nat(), mutations: fc.array(mutation, { minLength: 1, maxLength: 4 }) })
    .map(({ seed, mutations }) => applyMutations(seeds[seed % seeds.length] as Uint8Array, mutations, seeds))
}

/** Mutated real inputs most of the time; unmodified real inputs and plain random bytes the rest. */
export function bytesInput(seeds: readonly Uint8Array[], maxRandom = 512): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { weight: 16, arbitrary: mutatedBytes(seeds) },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: maxRandom }).map((b) => Buffer.from(b)) },
    { weight: 1, arbitrary: fc.nat().map((i) => Buffer.from(seeds[i % seeds.length] as Uint8Array)) }
  )
}

/** Lines: mutated real lines (as UTF-8, so invalid sequences become U+FFFD), random strings, real lines unchanged. */
export function lineInput(lines: readonly string[]): fc.Arbitrary<string> {
  const seeds = lines.map((l) => Buffer.from(l, 'utf8'))
  return fc.oneof(
    { weight: 14, arbitrary: mutatedBytes(seeds).map((b) => b.toString('utf8')) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
    {
      weight: 1,
      arbitrary: fc
        .array(
          fc.constantFrom('"', '[', ']', ' ', '-', '\t', '0', '200', 'GET', '/', 'HTTP/1.1', ':', '{', '}', '\\', 'é'),
          { maxLength: 60 }
        )
        .map((t) => t.join(''))
    },
    { weight: 2, arbitrary: fc.constantFrom(...lines) }
  )
}
