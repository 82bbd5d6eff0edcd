import assert from 'node:assert/strict'
import { PassThrough, type Readable } from 'node:stream'
import { describe, it } from 'node:test'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'
import { startContainerAgain, type Testcontainers } from '../../../lib/embedded-broker/select-broker.js'

/**
 * A testcontainers stand-in whose every container writes `lines` and exits during its start, as an apache/kafka
 * container that fails does: testcontainers then reports only that the log ended.
 */
function exitingContainers(lines: readonly string[]): { tc: Testcontainers; starts: () => number } {
  let starts = 0
  class GenericContainer {
    private consume: ((stream: Readable) => unknown) | undefined
    withEnvironment(): this {
      return this
    }
    withExposedPorts(): this {
      return this
    }
    withWaitStrategy(): this {
      return this
    }
    withStartupTimeout(): this {
      return this
    }
    withLogConsumer(consume: (stream: Readable) => unknown): this {
      this.consume = consume
      return this
    }
    start(): Promise<never> {
      starts++
      const stream = new PassThrough({ encoding: 'utf8' })
      this.consume?.(stream)
      for (const line of lines) stream.write(`${line}\n`)
      // The wait strategy fails once the stream's data has been handed on.
      return new Promise((_, reject) =>
        setImmediate(() => reject(new Error('Log stream ended and message "/Kafka Server started/" was not received')))
      )
    }
  }
  const tc = { GenericContainer, Wait: { forLogMessage: () => ({}) } } as unknown as Testcontainers
  return { tc, starts: () => starts }
}

describe('startContainerAgain', () => {
  it('starts a container that exited during its start once more, then fails naming its last lines', async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i}`)
    lines.push('ERROR Exiting Kafka due to fatal exception')
    const { tc, starts } = exitingContainers(lines)
    const warned: string[] = []
    const failed = await startContainerAgain(tc, '127.0.0.1', { warn: (m) => warned.push(m) }).catch((e: unknown) => e)
    assert.equal(starts(), 2, 'one start, then one more')
    assert.equal(warned.length, 1)
    assert.match(warned[0] as string, /container did not start \(Log stream ended.*\); starting another/)
    assert.ok(failed instanceof SqueezeError && failed.code === ErrorCodes.BROKER_START, String(failed))
    assert.match(failed.message, /its last lines: .*line 29 \| ERROR Exiting Kafka due to fatal exception$/)
    assert.doesNotMatch(failed.message, /line 15 \|/, 'only the last lines, not the whole output')
  })
})
