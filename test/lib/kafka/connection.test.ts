import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { pino } from 'pino'
import { kafkajsLogCreator } from '../../../lib/kafka/connection.js'
import { KAFKAJS_LOG_LEVELS } from '../../../lib/kafka/kafkajs-internals.js'

/** kafkajs's Connection line for an error response, as kafkajs 2.2 writes it. */
function errorResponse(error: string) {
  return { namespace: 'Connection', level: KAFKAJS_LOG_LEVELS.ERROR, label: 'ERROR', log: { timestamp: '2026-12-01T13:41:28.016Z', message: 'Response Metadata(key: 3, version: 6)', broker: '127.0.0.1:41307', clientId: 'squeeze', error, correlationId: 13, size: 112 } }
}

function levelsLogged(errors: readonly string[]): number[] {
  const lines: string[] = []
  const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) })
  const write = kafkajsLogCreator(log)(KAFKAJS_LOG_LEVELS.WARN)
  for (const error of errors) write(errorResponse(error))
  return lines.map((l) => (JSON.parse(l) as { level: number }).level)
}

describe('kafkajs log lines in squeeze\'s log', () => {
  it('error responses kafkajs retries (a fresh topic\'s metadata, a moved leader, a loading coordinator) go to debug', () => {
    assert.deepEqual(levelsLogged([
      'This server does not host this topic-partition',
      'There is no leader for this topic-partition as we are in the middle of a leadership election',
      'This server is not the leader for that topic-partition',
      'The coordinator is loading and hence can\'t process requests'
    ]), [20, 20, 20, 20])
  })

  it('any other error response stays at error', () => {
    assert.deepEqual(levelsLogged(['Not authorized to access topics: [Topic authorization failed]', 'The request attempted to perform an operation on an invalid topic']), [50, 50])
  })
})
