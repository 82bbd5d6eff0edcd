import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  ChildFailed,
  must,
  roundOrder,
  runChild,
  sectionFailure,
  sectionFailureBody,
  STDERR_TAIL_LINES
} from '../../../bench/lib/harness.js'

describe('bench rounds', () => {
  it('roundOrder runs every peer once per round, and each one first in turn', () => {
    const peers = ['squeeze', 'rsyslog', 'kcat'] as const
    const rounds = Array.from({ length: 6 }, (_, round) => roundOrder(peers, round))
    for (const order of rounds) assert.deepEqual([...order].sort(), [...peers].sort())
    assert.deepEqual(
      rounds.map((order) => order[0]),
      ['squeeze', 'rsyslog', 'kcat', 'squeeze', 'rsyslog', 'kcat']
    )
    assert.deepEqual(rounds[1], ['rsyslog', 'kcat', 'squeeze'], 'the order is kept, rotated')
    assert.deepEqual(roundOrder([], 3), [])
  })
})

describe("a failed section keeps its failed child's stderr tail", () => {
  it('a client that writes its error to stderr and exits non-zero: the last lines reach the failure record', async () => {
    // 40 lines, the last of them the error a client prints as it dies: the record keeps the last STDERR_TAIL_LINES.
    const script =
      'for (let i = 0; i < 40; i++) console.error(`progress ${i}`);' +
      "console.error('Error: broker refused: ```TOPIC_AUTHORIZATION_FAILED```');" +
      'console.log("a figure on stdout"); process.exit(3)'
    const run = await runChild(process.execPath, ['-e', script])
    assert.equal(run.code, 3)
    let thrown: unknown
    try {
      must(run, 'producer client')
    } catch (err) {
      thrown = err
    }
    assert.ok(thrown instanceof ChildFailed)
    const failure = sectionFailure(thrown)
    assert.equal(failure.error, 'producer client exited 3')
    assert.equal(failure.stderrTail.length, STDERR_TAIL_LINES)
    assert.equal(failure.stderrTail.at(-1), 'Error: broker refused: ```TOPIC_AUTHORIZATION_FAILED```')
    assert.equal(failure.stderrTail[0], `progress ${40 - STDERR_TAIL_LINES + 1}`)
    const body = sectionFailureBody(failure)
    assert.match(body, /^The section stopped with: producer client exited 3\n/)
    assert.ok(body.includes('progress 39\nError: broker refused: ` ` `TOPIC_AUTHORIZATION_FAILED` ` `'), body)
    assert.ok(!body.includes('a figure on stdout'), 'stdout is not stderr')
    assert.equal(body.split('```').length, 3, 'one code block, not ended early by a fence in the tail')
  })

  it("a peer's own error with its output after the first line keeps that output; a silent child says so", () => {
    const peer = sectionFailure(new Error('restart: stuck at 10 records:\nline a\nline b\n'))
    assert.deepEqual(peer, { error: 'restart: stuck at 10 records:', stderrTail: ['line a', 'line b'] })
    const silent = sectionFailure(new ChildFailed('kcat -P', { code: 1, stderr: '' }))
    assert.deepEqual(silent, { error: 'kcat -P exited 1', stderrTail: [] })
    assert.match(sectionFailureBody(silent), /wrote nothing to stderr/)
  })
})
