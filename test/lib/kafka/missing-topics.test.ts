import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes } from '../../../lib/errors.js'
import { missingTopicsError } from '../../../lib/kafka/missing-topics.js'

const TOPICS = [
  'prod.payments.http-access.v2',
  'prod.payments.nginx-error.v2',
  'prod.identity.journald-events',
  'prod.identity.journald-events.zstd-3',
  'staging.dns',
  'logs'
]

describe('missingTopicsError', () => {
  it('names every topic the cluster lacks in one error, and none when all exist', () => {
    assert.equal(missingTopicsError(['a', 'b'], ['a', 'b']), undefined)
    const one = missingTopicsError(['a'], ['a', 'b'])
    assert.equal(one?.code, ErrorCodes.SOURCE)
    assert.equal(one?.message, 'topic b not found on the cluster')
    assert.equal(missingTopicsError([], ['b', 'c'])?.message, 'topics b, c not found on the cluster')
  })

  it('offers the existing names a misspelt one is near, and nothing when none is', () => {
    assert.equal(
      missingTopicsError(TOPICS, ['prod.payments.http-acess.v2'], { where: '10.0.0.1:9092', role: 'source topic' })
        ?.message,
      'source topic prod.payments.http-acess.v2 not found on 10.0.0.1:9092; did you mean prod.payments.http-access.v2?'
    )
    assert.equal(missingTopicsError(TOPICS, ['log'])?.message, 'topic log not found on the cluster; did you mean logs?')
    assert.equal(missingTopicsError(TOPICS, ['billing'])?.message, 'topic billing not found on the cluster')
  })

  it('says a pattern is no topic name, with the topics it would match', () => {
    assert.equal(
      missingTopicsError(TOPICS, ['prod\\.payments\\..*'], { list: true })?.message,
      'topic prod\\.payments\\..* not found on the cluster; a topic is named, not matched by a pattern ' +
        '(prod\\.payments\\..* as a regex matches prod.payments.http-access.v2, prod.payments.nginx-error.v2); ' +
        'list topics with commas'
    )
    assert.match(
      missingTopicsError(TOPICS, ['prod.*'])?.message ?? '',
      /as a regex matches 4 topics: prod\.identity\..*, \.\.\.\)/
    )
    // A command of one topic (compare, copy, bench) asks for no list.
    assert.match(missingTopicsError(TOPICS, ['*.dns'])?.message ?? '', /\(\*\.dns as a regex matches none\)$/)
  })
})
