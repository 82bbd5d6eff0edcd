import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { LOG_KINDS, formatFor, readHttpRequest } from '../../../lib/formats/index.js'
import { createGenerator } from '../../../lib/generators/index.js'
import type { LogKind } from '../../../lib/formats/index.js'

function sample(kind: LogKind, seed: number, n: number, startTimeMs?: number): Buffer {
  const gen = createGenerator(kind, startTimeMs === undefined ? { seed } : { seed, startTimeMs })
  const parts: Buffer[] = []
  for (let i = 0; i < n; i++) {
    const r = gen.next()
    parts.push(r.key ?? Buffer.alloc(0), r.value, Buffer.from(String(r.timestampMs)))
  }
  return Buffer.concat(parts)
}

describe('generators', () => {
  for (const kind of LOG_KINDS) {
    describe(kind, () => {
      it('same seed gives the same bytes', () => {
        assert.ok(sample(kind, 123, 2000).equals(sample(kind, 123, 2000)))
      })

      it('different seeds give different bytes', () => {
        assert.ok(!sample(kind, 123, 500).equals(sample(kind, 124, 500)))
      })

      it('records decode with formatFor(kind), timestamps never go backwards', () => {
        const start = Date.UTC(2025, 0, 1)
        const gen = createGenerator(kind, { seed: 5, startTimeMs: start })
        const format = formatFor(kind)
        let last = start
        for (let i = 0; i < 3000; i++) {
          const r = gen.next()
          assert.ok(format.decode(r.value) > 0)
          assert.ok(r.timestampMs >= last, `record ${i}: ${r.timestampMs} < ${last}`)
          assert.ok(r.timestampMs < start + 30 * 86_400_000, 'time ran away')
          last = r.timestampMs
          if (kind === 'http')
            assert.equal(
              r.key?.toString(),
              `${readHttpRequest(r.value).clientIp}:${readHttpRequest(r.value).clientPort}`
            )
          else assert.equal(r.key, null)
        }
      })
    })
  }

  it("http ray ids are the snowflake of the record's ms time, its colo and server, and a sequence, in 16 hex digits", () => {
    const gen = createGenerator('http', { seed: 11, startTimeMs: Date.UTC(2031, 6, 1) })
    for (let i = 0; i < 3000; i++) {
      const r = gen.next()
      const f = readHttpRequest(r.value)
      const m = /^([0-9a-f]{16})-([A-Z]{3})$/.exec(f.rayId)
      assert.ok(m !== null, f.rayId)
      assert.equal(m[2], f.edgeLocation)
      assert.equal(BigInt(`0x${m[1]}`) >> 22n, BigInt(r.timestampMs), f.rayId)
      assert.equal(f.timestampNs, BigInt(r.timestampMs) * 1_000_000n)
    }
  })

  it('text records are encodeLine-compatible (a generated line parses as a real one would)', () => {
    for (const kind of LOG_KINDS) {
      if (kind === 'http') continue
      const gen = createGenerator(kind, { seed: 9 })
      for (let i = 0; i < 1000; i++) {
        const line = gen.next().value.toString('utf8')
        assert.ok(formatFor(kind).encodeLine(line).equals(Buffer.from(line)), `${kind}: ${line}`)
      }
    }
  })
})
