import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { pino } from 'pino'
import { kafkajsLogCreator } from '../../../lib/kafka/connection.js'
import { KAFKAJS_LOG_LEVELS } from '../../../lib/kafka/kafkajs-internals.js'

/** kafkajs's Connection line for an error response, as kafkajs 2.2 writes it. */
function errorResponse(error: string) {
  return {
    namespace: 'Connection',
    level: KAFKAJS_LOG_LEVELS.ERROR,
    label: 'ERROR',
    log: {
      timestamp: '2026-12-01T13:41:28.016Z',
      message: 'Response Metadata(key: 3, version: 6)',
      broker: '127.0.0.1:41307',
      clientId: 'squeeze',
      error,
      correlationId: 13,
      size: 112
    }
  }
}

function levelsLogged(errors: readonly string[], level = 'debug'): number[] {
  const lines: string[] = []
  const log = pino({ level }, { write: (line: string) => lines.push(line) })
  const write = kafkajsLogCreator(log)(KAFKAJS_LOG_LEVELS.WARN)
  for (const error of errors) write(errorResponse(error))
  return lines.map((l) => (JSON.parse(l) as { level: number }).level)
}

const ERRORS = [
  'This server does not host this topic-partition',
  "The coordinator is loading and hence can't process requests",
  'Not authorized to access topics: [Topic authorization failed]',
  'The request attempted to perform an operation on an invalid topic'
]

describe("kafkajs log lines in squeeze's log", () => {
  it("every line of kafkajs's own, retried or not, goes to debug", () => {
    assert.deepEqual(levelsLogged(ERRORS), [20, 20, 20, 20])
  })

  it("at the default and warn levels kafkajs adds no line: squeeze's own error says what failed", () => {
    assert.deepEqual(levelsLogged(ERRORS, 'info'), [])
    assert.deepEqual(levelsLogged(ERRORS, 'warn'), [])
  })
})
