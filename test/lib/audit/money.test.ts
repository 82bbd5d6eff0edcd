import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { DAYS_PER_MONTH, monthlyMoney, pricesFrom, sumMoney } from '../../../lib/audit/money.js'
import { SqueezeError } from '../../../lib/errors.js'

const GIB = 1024 ** 3
const PRICES = { storageGiBMonth: 0.1, transferGiB: 0.02, coreHour: 0.05, currency: 'USD', source: null }

describe('audit money', () => {
  it('storage on the disk saved at retention, transfer on fetches per day over a month, CPU per core-hour; net is saved less CPU', () => {
    const m = monthlyMoney(PRICES, {
      steadyStateDiskBytes: 100 * GIB,
      fetchBytesPerDay: 10 * GIB,
      cpuSecondsPerDay: 3600
    })
    assert.equal(m.storage, 10)
    assert.ok(Math.abs((m.transfer ?? 0) - 10 * DAYS_PER_MONTH * 0.02) < 1e-9)
    assert.ok(Math.abs((m.cpu ?? 0) - DAYS_PER_MONTH * 0.05) < 1e-9)
    assert.ok(Math.abs((m.net ?? 0) - (10 + 10 * DAYS_PER_MONTH * 0.02 - DAYS_PER_MONTH * 0.05)) < 1e-9)
  })

  it('a missing figure or price leaves its field null, and the net counts what is known', () => {
    const m = monthlyMoney(
      { ...PRICES, transferGiB: null },
      { steadyStateDiskBytes: null, fetchBytesPerDay: GIB, cpuSecondsPerDay: 0 }
    )
    assert.deepEqual(m, { storage: null, transfer: null, cpu: 0, net: 0 })
    assert.deepEqual(sumMoney([m, { storage: 2, transfer: null, cpu: 1, net: 1 }]), {
      storage: 2,
      transfer: null,
      cpu: 1,
      net: 1
    })
  })

  it('--prices FILE gives prices with their source and date; flags override it; no prices at all is null', () => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-prices-'))
    try {
      const file = join(dir, 'prices.json')
      writeFileSync(
        file,
        JSON.stringify({
          storageGiBMonth: 0.08,
          coreHour: 0.04,
          currency: 'EUR',
          source: 'provider list price',
          date: '2026-01-01'
        })
      )
      assert.deepEqual(pricesFrom({ file, coreHour: 0.1 }), {
        storageGiBMonth: 0.08,
        transferGiB: null,
        coreHour: 0.1,
        currency: 'EUR',
        source: 'provider list price, 2026-01-01'
      })
      assert.equal(pricesFrom({}), null)
      writeFileSync(file, JSON.stringify({ storage: 1, coreHour: -1 }))
      assert.throws(
        () => pricesFrom({ file }),
        (err: unknown) =>
          err instanceof SqueezeError && /unknown key "storage".*coreHour must be a number >= 0/.test(err.message)
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
