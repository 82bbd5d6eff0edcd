import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  FORMAT_SAMPLE_BYTES,
  FORMAT_SAMPLE_VALUES,
  guessFormat,
  TopicFormats
} from '../../../lib/consumer/format-choice.js'
import { formatFor, LOG_KINDS, type LogKind } from '../../../lib/formats/index.js'
import { createLogger } from '../../../lib/log/logger.js'
import type { ReadBatch } from '../../../lib/protocol/record-batch-reader.js'
import { kindLines } from '../../helpers/corpus.js'

/** The record values a topic of `kind` holds as squeeze writes them: Cap'n Proto for http, the line elsewhere. */
function recordValues(kind: LogKind, count = FORMAT_SAMPLE_VALUES): Buffer[] {
  const format = formatFor(kind)
  const values: Buffer[] = []
  for (const line of kindLines(kind)) {
    if (values.length === count) break
    try {
      values.push(format.encodeLine(line))
    } catch {
      // A line of the fixture that is not a record (a zeek header, say) is not in the topic either.
    }
  }
  return values
}

/** Values packed into one buffer, as a batch's decompressed records section holds them. */
function packed(values: readonly Buffer[]): Array<readonly [Buffer, number, number]> {
  const bytes = Buffer.concat([Buffer.from('head'), ...values])
  let at = 4
  return values.map((v) => {
    const range = [bytes, at, at + v.length] as const
    at += v.length
    return range
  })
}

/** A batch exposing only what TopicFormats reads: its values. */
function batchOf(values: readonly Buffer[]): ReadBatch {
  const ranges = packed(values)
  const batch: Pick<ReadBatch, 'forEachValue'> = {
    forEachValue(visit) {
      ranges.forEach(([bytes, start, end], i) => visit(bytes, start, end, i))
    }
  }
  return batch as ReadBatch
}

describe('guessFormat: the kind a topic is read as, from its first values', () => {
  for (const kind of LOG_KINDS)
    it(`${kind} records written as squeeze writes them read as ${kind}`, () => {
      const values = recordValues(kind)
      assert.ok(values.length > 20, `${kind}: ${values.length} sample values`)
      const guess = guessFormat(packed(values))
      assert.equal(guess.kind, kind)
      assert.equal(guess.sampled, values.length)
      assert.ok(guess.decoded * 2 >= guess.sampled, `${guess.decoded} of ${guess.sampled}`)
    })

  it('access-log lines as text (another producer) are none of the kinds: the http kind reads Cap’n Proto', () => {
    const lines = kindLines('http')
      .slice(0, 100)
      .map((l) => Buffer.from(l))
    assert.equal(guessFormat(packed(lines)).kind, 'none')
  })

  it('random bytes, and a topic where under half decode as any one kind, are none', () => {
    let seed = 7
    const random = Array.from({ length: 100 }, () =>
      Buffer.from(Array.from({ length: 80 }, () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) & 0xff))
    )
    assert.equal(guessFormat(packed(random)).kind, 'none')
    const mixed = [...recordValues('syslog', 40), ...recordValues('journald', 40), ...random.slice(0, 40)]
    assert.equal(guessFormat(packed(mixed)).kind, 'none')
    assert.equal(guessFormat([]).kind, 'none')
  })
})

describe('TopicFormats', () => {
  const log = createLogger({ level: 'silent' })

  it('auto chooses per topic from its first batch of values and keeps the choice', () => {
    const formats = new TopicFormats('auto', log)
    assert.equal(formats.forBatch('a', batchOf(recordValues('journald')))?.kind, 'journald')
    assert.equal(formats.forBatch('b', batchOf(recordValues('http')))?.kind, 'http')
    // Later batches do not move it.
    assert.equal(formats.forBatch('a', batchOf(recordValues('syslog')))?.kind, 'journald')
    assert.equal(formats.forBatch('b', batchOf(recordValues('journald')))?.kind, 'http')
  })

  it('auto leaves a batch of null values undecided, and reads an unknown topic without decoding', () => {
    const formats = new TopicFormats('auto', log)
    assert.equal(formats.forBatch('t', batchOf([])), null)
    // Undecided still: the next batch, of journald lines, decides.
    assert.equal(formats.forBatch('t', batchOf(recordValues('journald')))?.kind, 'journald')
    const random = Array.from({ length: FORMAT_SAMPLE_VALUES }, (_, i) => Buffer.from([0xff, 0x00, i & 0xff]))
    assert.equal(formats.forBatch('u', batchOf(random)), null)
    // Decided as none on a full sample: later batches are not decoded either.
    assert.equal(formats.forBatch('u', batchOf(recordValues('journald'))), null)
  })

  it('a few records written by hand before the producer started do not decide the topic: the sample spans batches', () => {
    const formats = new TopicFormats('auto', log)
    const handWritten = ['test', 'hello'].map((s) => Buffer.from(s))
    // Read as none while those are all there is...
    assert.equal(formats.forBatch('t', batchOf(handWritten)), null)
    // ...then as the kind the topic's values decode as, once its producer's batches arrive, and kept.
    const syslog = recordValues('syslog')
    assert.equal(formats.forBatch('t', batchOf(syslog.slice(0, 50)))?.kind, 'syslog')
    assert.equal(formats.forBatch('t', batchOf(syslog.slice(50)))?.kind, 'syslog')
    assert.equal(formats.forBatch('t', batchOf(recordValues('journald')))?.kind, 'syslog')
  })

  it('the sample is capped in bytes as well as values: a topic of large values decides on fewer', () => {
    const formats = new TopicFormats('auto', log)
    const large = Array.from({ length: 3 }, () => Buffer.alloc(FORMAT_SAMPLE_BYTES / 2, 0xfe))
    assert.equal(formats.forBatch('big', batchOf(large)), null)
    // Final at two values (their bytes reach the cap): decodable values later do not move it.
    assert.equal(formats.forBatch('big', batchOf(recordValues('journald'))), null)
  })

  it('a kind or none given is used for every topic, unread', () => {
    const zeek = new TopicFormats('dns-zeek', log)
    assert.equal(zeek.forBatch('x', batchOf(recordValues('http')))?.kind, 'dns-zeek')
    const none = new TopicFormats('none', log)
    assert.equal(none.forBatch('x', batchOf(recordValues('http'))), null)
  })
})
