import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { connectionFrom } from '../../../lib/config/cli.js'

/** The warnings connectionFrom logs for these TLS flags. */
function warningsFor(flags: Record<string, string>): string[] {
  const warnings: string[] = []
  const log = { warn: (...args: unknown[]) => warnings.push(String(args.find((a) => typeof a === 'string'))) }
  connectionFrom({ brokers: '127.0.0.1:9093', 'security-protocol': 'SSL', ...flags }, {}, log as never)
  return warnings
}

describe('TLS settings that turn checks off are logged as warnings', () => {
  it('certificate verification off: one warning naming the setting', () => {
    const warnings = warningsFor({ 'ssl-reject-unauthorized': 'false' })
    assert.equal(warnings.length, 1)
    assert.match(warnings[0] ?? '', /^TLS certificate verification is off \(--ssl-reject-unauthorized false/)
  })

  it('host-name checking off: one warning naming the setting', () => {
    const warnings = warningsFor({ 'ssl-endpoint-identification': 'none' })
    assert.equal(warnings.length, 1)
    assert.match(warnings[0] ?? '', /^TLS host-name checking is off \(--ssl-endpoint-identification none/)
  })

  it('both off: both warnings; the defaults: none', () => {
    assert.equal(warningsFor({ 'ssl-reject-unauthorized': 'false', 'ssl-endpoint-identification': 'none' }).length, 2)
    assert.deepEqual(warningsFor({}), [])
  })
})
