import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Worker } from 'node:worker_threads'
import { createCodec, parseCodecSpec } from '../../../lib/codecs/index.js'
import { SqueezeError } from '../../../lib/errors.js'
import { threadCpuSeconds } from '../../../lib/metrics/thread-cpu.js'
import { BATCH } from '../../../lib/protocol/batch-layout.js'
import { crc32c, crc32cImplementation, crc32cTables } from '../../../lib/protocol/crc32c.js'
import {
  buildBatch,
  encodeHeaders,
  NON_IDEMPOTENT,
  RecordBatchBuilder,
  stampProducerState,
  type ValueWriter
} from '../../../lib/protocol/record-batch-builder.js'
import { innerOffsetsAreSequential, readBatch } from '../../../lib/protocol/record-batch-reader.js'
import { readBatches } from '../../helpers/record-batches.js'
import type { OutgoingRecord } from '../../../lib/protocol/record.js'
import { readZigzag, writeZigzag, zigzagSize } from '../../../lib/protocol/varint.js'

const records: OutgoingRecord[] = Array.from({ length: 300 }, (_, i) => ({
  key: i % 5 === 0 ? null : Buffer.from(`key-${i % 17}`),
  value: i % 50 === 7 ? null : Buffer.from(`value ${i} `.repeat(1 + (i % 9))),
  headers:
    i % 3 === 0
      ? [
          { key: 'trace', value: Buffer.from(`t${i}`) },
          { key: 'empty', value: null }
        ]
      : [],
  timestamp: 1_700_000_000_000 + i * 3 - (i % 4 === 0 ? 5 : 0)
}))

describe('varints', () => {
  it('round-trip zigzag values including 64-bit timestamp deltas', () => {
    const buf = Buffer.alloc(16)
    for (const value of [
      0,
      1,
      -1,
      63,
      -64,
      64,
      300,
      -300,
      2 ** 30,
      -(2 ** 30),
      2 ** 31 - 1,
      -(2 ** 31),
      2 ** 40 + 5,
      -(2 ** 45) - 3,
      Number.MAX_SAFE_INTEGER >> 2
    ]) {
      const end = writeZigzag(buf, 0, value)
      assert.equal(end, zigzagSize(value), `size of ${value}`)
      const cursor = { offset: 0 }
      assert.equal(readZigzag(buf, cursor), value)
      assert.equal(cursor.offset, end)
    }
  })
})

describe('crc32c', () => {
  it('matches the standard check value', () => {
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283)
    assert.equal(crc32c(Buffer.alloc(32)), 0x8a9136aa)
  })

  it('uses the native binding here, and agrees with the JS tables on every length and offset', () => {
    if (process.platform === 'linux' && process.arch === 'x64') assert.equal(crc32cImplementation(), 'native')
    const data = Buffer.from(Array.from({ length: 4099 }, (_, i) => (i * 131 + 7) & 0xff))
    for (const [start, end] of [
      [0, 0],
      [0, 1],
      [3, 11],
      [1, 4099],
      [61, 4000],
      [0, 4099]
    ] as const) {
      assert.equal(crc32c(data, start, end), crc32cTables(data, start, end), `${start}..${end}`)
    }
  })
})

describe('record batches', () => {
  for (const spec of ['none', 'gzip:6', 'snappy', 'lz4:1', 'zstd:3']) {
    it(`${spec}: every field survives a build and read`, () => {
      const sealed = buildBatch(records, createCodec(parseCodecSpec(spec)), {
        producerId: 42n,
        producerEpoch: 3,
        baseSequence: 100,
        transactional: false
      })
      const batch = readBatch(sealed.bytes)
      assert.equal(batch.records.length, records.length)
      assert.equal(batch.producerId, 42n)
      assert.equal(batch.baseSequence, 100)
      assert.ok(innerOffsetsAreSequential(batch))
      records.forEach((expected, i) => {
        const actual = batch.records[i]
        assert.ok(actual)
        assert.deepEqual(actual.key, expected.key)
        assert.deepEqual(actual.value, expected.value)
        assert.equal(actual.timestamp, expected.timestamp)
        assert.equal(actual.offset, i)
        assert.deepEqual(actual.headers, expected.headers)
      })
      assert.equal(sealed.bytes.readInt16BE(BATCH.ATTRIBUTES) & 7, createCodec(parseCodecSpec(spec)).id)
    })
  }

  it("on the thread clock, counts a batch's decompression CPU on the reading thread alone, not on a thread spinning beside it", async () => {
    const sealed = buildBatch(records, createCodec(parseCodecSpec('gzip:6')), NON_IDEMPOTENT)
    const spinner = new Worker('const end = Date.now() + 60_000; while (Date.now() < end);', { eval: true })
    try {
      await new Promise((resolve) => spinner.once('online', resolve))
      const start = threadCpuSeconds()
      let decompress = 0
      for (let i = 0; i < 2000; i++)
        decompress += readBatch(sealed.bytes, { cpuSeconds: threadCpuSeconds }).decompressCpuSeconds
      const thread = threadCpuSeconds() - start
      // Every decompression ran inside this window on this thread; the process's clock would add the spinner's CPU.
      assert.ok(decompress <= thread, `decompress ${decompress} s, this thread's CPU over the loop ${thread} s`)
    } finally {
      await spinner.terminate()
    }
  })

  it('a builder refuses the record that would overflow batch.size, but takes an oversized first record', () => {
    const builder = new RecordBatchBuilder(1000)
    const value = Buffer.alloc(300, 1)
    let accepted = 0
    while (builder.tryAppend({ key: null, value }, 1)) accepted++
    assert.equal(accepted, 3)
    assert.ok(builder.sizeBytes <= 1000)
    const lone = new RecordBatchBuilder(100)
    assert.ok(lone.tryAppend({ key: null, value: Buffer.alloc(5000) }, 1))
    assert.equal(lone.recordCount, 1)
  })

  it('detects a flipped bit through the CRC and names the problem', () => {
    const sealed = buildBatch(records.slice(0, 20), createCodec({ codec: 'none', level: null }))
    const bytes = Buffer.from(sealed.bytes)
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] ?? 0) ^ 0x10
    assert.throws(
      () => readBatch(bytes),
      (err: unknown) =>
        err instanceof SqueezeError && err.code === 'SQUEEZE_ERR_BATCH_CORRUPT' && /CRC mismatch/.test(err.message)
    )
  })

  it('stops at a partial trailing batch, as fetch responses may end mid-batch', () => {
    const one = buildBatch(records.slice(0, 10), createCodec({ codec: 'zstd', level: 1 })).bytes
    const two = buildBatch(records.slice(10, 30), createCodec({ codec: 'zstd', level: 1 })).bytes
    const set = Buffer.concat([one, two.subarray(0, two.length - 5)])
    assert.equal(readBatches(set).length, 1)
    assert.equal(readBatches(Buffer.concat([one, two])).length, 2)
  })

  it('a batch with wrong inner offsets is recognisable (what makes a broker recompress)', () => {
    const sealed = buildBatch(records.slice(0, 5), createCodec({ codec: 'none', level: null }))
    const bytes = Buffer.from(sealed.bytes)
    // Rewrite the second record's offsetDelta from 1 to 0: the sarama bug from the field report.
    const first = readBatch(bytes)
    assert.ok(innerOffsetsAreSequential(first))
    const recordStart = BATCH.HEADER_BYTES
    const cursor = { offset: recordStart }
    const len = readZigzag(bytes, cursor)
    const second = cursor.offset + len
    const c2 = { offset: second }
    readZigzag(bytes, c2) // length
    c2.offset += 1 // attributes
    readZigzag(bytes, c2) // timestamp delta
    bytes[c2.offset] = 0 // offsetDelta zigzag(1)=2 -> 0
    stampProducerState(bytes, { producerId: -1n, producerEpoch: -1, baseSequence: -1, transactional: false })
    assert.equal(innerOffsetsAreSequential(readBatch(bytes)), false)
  })

  it('rejects absurd record counts without allocating', () => {
    const sealed = buildBatch(records.slice(0, 3), createCodec({ codec: 'none', level: null }))
    const bytes = Buffer.from(sealed.bytes)
    bytes.writeInt32BE(2_000_000_000, BATCH.RECORD_COUNT)
    stampProducerState(bytes, { producerId: -1n, producerEpoch: -1, baseSequence: -1, transactional: false })
    assert.throws(() => readBatch(bytes), /claims 2000000000 records/)
  })
})

describe('RecordBatchBuilder.tryAppendWritten: a value written straight into the batch', () => {
  /** Writes the text's UTF-8 bytes at odd offsets and zeros at even ones: every byte, over the dirty memory it is given. */
  const sparse: ValueWriter<string> = (buf, _view, at, text) => {
    const bytes = Buffer.from(text)
    for (let i = 0; i < bytes.length; i++) {
      buf[at + 2 * i] = 0
      buf[at + 2 * i + 1] = bytes[i] as number
    }
    return at + 2 * bytes.length
  }
  const sparseValue = (text: string): Buffer => {
    const bytes = Buffer.from(text)
    const value = Buffer.alloc(2 * bytes.length)
    bytes.forEach((b, i) => {
      value[2 * i + 1] = b
    })
    return value
  }
  /** Bounds far above the value (as the Cap'n Proto writer's 3 bytes per UTF-16 unit), so the length prefixes shrink. */
  const boundOf = (text: string): number => 3 * 2 * Buffer.byteLength(text) + 10
  const dirty = (size: number): Buffer => Buffer.alloc(size, 0xa5)

  it('the same batch as tryAppend of the written values, mixed with ordinary records, across length-prefix sizes and a grow', () => {
    const texts = [
      '',
      'a',
      'x'.repeat(20),
      'y'.repeat(31),
      'z'.repeat(32),
      'é'.repeat(700),
      'w'.repeat(4095),
      'v'.repeat(4096),
      'u'.repeat(70_000)
    ]
    const direct = new RecordBatchBuilder(Number.POSITIVE_INFINITY, 1024, dirty)
    const copied = new RecordBatchBuilder(Number.POSITIVE_INFINITY, 1024)
    texts.forEach((text, i) => {
      const timestamp = 1_700_000_000_000 + i * 7
      assert.ok(direct.tryAppendWritten(boundOf(text), timestamp, sparse, text))
      assert.ok(copied.tryAppend({ key: null, value: sparseValue(text) }, timestamp))
      const between = records[i] as OutgoingRecord
      assert.ok(direct.tryAppend(between, timestamp + 1))
      assert.ok(copied.tryAppend(between, timestamp + 1))
    })
    assert.equal(direct.recordCount, copied.recordCount)
    assert.deepEqual(direct.finish(), copied.finish())
  })

  it('with headers encoded once (encodeHeaders): the same batch as tryAppend of the values with those headers', () => {
    const headers = [
      { key: 'squeeze.source.file', value: Buffer.from('/var/log/nginx/access.log') },
      { key: 'é-key', value: null },
      { key: 'empty', value: Buffer.alloc(0) }
    ]
    const encoded = encodeHeaders(headers)
    const direct = new RecordBatchBuilder(Number.POSITIVE_INFINITY, 256, dirty)
    const copied = new RecordBatchBuilder(Number.POSITIVE_INFINITY, 256)
    for (const [i, text] of ['', 'a', 'x'.repeat(63), 'é'.repeat(700), 'u'.repeat(9000)].entries()) {
      assert.ok(direct.tryAppendWritten(boundOf(text), 1_700_000_000_000 + i, sparse, text, encoded))
      assert.ok(copied.tryAppend({ key: null, value: sparseValue(text), headers }, 1_700_000_000_000 + i))
    }
    assert.deepEqual(direct.finish(), copied.finish())
  })

  it('refuses a record whose bound would overflow batch.size, takes a lone one, and a writer that throws leaves no trace', () => {
    const builder = new RecordBatchBuilder(1000, 1000, dirty)
    while (builder.tryAppendWritten(300, 1, sparse, 'abc'));
    // Room is judged by the bound (a 300-byte value and its prefixes), the batch holds what was written.
    assert.ok(builder.sizeBytes <= 1000 && builder.sizeBytes + 310 > 1000, `${builder.sizeBytes}`)
    assert.equal(builder.recordCount, (builder.sizeBytes - BATCH.HEADER_BYTES) / 13)
    const failing: ValueWriter<string> = (buf, view, at, text) => {
      sparse(buf, view, at, text)
      throw new Error('writer failed')
    }
    const next = new RecordBatchBuilder(4096, 4096, dirty)
    assert.throws(() => next.tryAppendWritten(boundOf('abcdef'), 1, failing, 'abcdef'), /writer failed/)
    assert.equal(next.recordCount, 0)
    assert.ok(next.tryAppendWritten(boundOf('ab'), 1, (buf, _view, at) => at + buf.write('ab-ab-', at, 'latin1'), 'ab'))
    const sealed = next.seal(createCodec(parseCodecSpec('none'))).bytes
    stampProducerState(sealed, NON_IDEMPOTENT)
    assert.deepEqual(
      readBatch(sealed).records.map((r) => r.value),
      [Buffer.from('ab-ab-')]
    )
    const lone = new RecordBatchBuilder(100, 100, dirty)
    assert.ok(lone.tryAppendWritten(5000, 1, sparse, 'big'))
    assert.equal(lone.recordCount, 1)
  })
})
