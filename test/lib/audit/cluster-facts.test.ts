import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { chooseTopics } from '../../../lib/audit/cluster-facts.js'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'

const ALL = [
  '__consumer_offsets',
  'prod.payments.http-access.v2',
  'prod.payments.nginx-error.v2',
  'prod.identity.journald-events',
  'staging.dns'
]
/** A flag's pattern as the audit compiles it: matched whole. */
const whole = (p: string): RegExp => new RegExp(`^(?:${p})$`)

function refusal(selection: Parameters<typeof chooseTopics>[1], all: readonly string[] = ALL): SqueezeError {
  try {
    chooseTopics(all, selection)
  } catch (err) {
    assert.ok(err instanceof SqueezeError)
    return err
  }
  assert.fail('no error')
}

describe('chooseTopics', () => {
  it("every topic but Kafka's internal ones, sorted; --topics names them when asked; --exclude leaves out", () => {
    assert.deepEqual(chooseTopics(ALL, { topics: null, exclude: null }), [
      'prod.identity.journald-events',
      'prod.payments.http-access.v2',
      'prod.payments.nginx-error.v2',
      'staging.dns'
    ])
    assert.deepEqual(chooseTopics(ALL, { topics: whole('__.*'), exclude: null }), ['__consumer_offsets'])
    assert.deepEqual(chooseTopics(ALL, { topics: whole('prod\\..*'), exclude: whole('.*nginx.*') }), [
      'prod.identity.journald-events',
      'prod.payments.http-access.v2'
    ])
  })

  it('selecting nothing is one error saying why, with the names likely meant, not an empty report', () => {
    const typo = refusal({ topics: whole('prod.payments.http-acess.v2'), exclude: null })
    assert.equal(typo.code, ErrorCodes.CONFIG_INVALID)
    assert.equal(
      typo.message,
      "--topics prod.payments.http-acess.v2 matches none of the cluster's 4 topics (a pattern matches whole " +
        'names); did you mean prod.payments.http-access.v2?'
    )
    assert.match(
      refusal({ topics: whole('payments'), exclude: null }).message,
      /; \.\*payments\.\* matches the 2 whose names hold it$/
    )
    assert.match(refusal({ topics: whole('billing.*'), exclude: null }).message, /whole names\)$/)
    assert.equal(
      refusal({ topics: whole('prod\\..*'), exclude: whole('prod.*') }).message,
      '--exclude prod.* leaves out all 3 topics selected: nothing to audit'
    )
    const empty = refusal({ topics: null, exclude: null }, ['__consumer_offsets'])
    assert.equal(empty.code, ErrorCodes.SOURCE)
    assert.match(empty.message, /^the cluster has no topics to audit/)
  })
})
