import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it } from 'node:test'

// PEERS_DIR is read when the module loads: point it at an empty folder first.
process.env['BENCH_PEERS_DIR'] = mkdtempSync(join(tmpdir(), 'squeeze-no-peers-'))
const { benchSkips, confluentPeer } = await import('../../../bench/lib/peers.js')

it('a missing @confluentinc/kafka-javascript fails the producer bench instead of dropping its rows', () => {
  assert.throws(
    () => confluentPeer({ BENCH_SKIP: '' }),
    /@confluentinc\/kafka-javascript cannot be loaded \(.*not installed.*\); set BENCH_SKIP=confluent/
  )
})

it('BENCH_SKIP=confluent leaves it out on purpose', () => {
  assert.equal(confluentPeer({ BENCH_SKIP: 'kcat, confluent' }), null)
  assert.deepEqual([...benchSkips({ BENCH_SKIP: ' confluent,,kcat ' })], ['confluent', 'kcat'])
})
