import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCodecSpec } from '../../../lib/codecs/index.js'
import {
  canExpress,
  CLIENT_NAMES,
  nearestExpressible,
  parseClients,
  targetsNeededFor
} from '../../../lib/apply/client-limits.js'
import { bestTargetPerClient } from '../../../lib/apply/best-target.js'
import { recommend } from '../../../lib/compare/recommend.js'
import { SAMPLE_TARGETS, target } from '../compare/sample-report.js'

const spec = parseCodecSpec
const MIB = 1024 * 1024

describe('client compression limits', () => {
  it('librdkafka, Vector and Fluent Bit stop at compression.level 12 for zstd; Java and squeeze reach 22', () => {
    for (const client of ['librdkafka', 'vector', 'fluent-bit'] as const) {
      assert.equal(canExpress(client, spec('zstd:12')), true, client)
      assert.equal(canExpress(client, spec('zstd:19')), false, client)
      assert.deepEqual(nearestExpressible(client, spec('zstd:19')), { codec: 'zstd', level: 12 })
    }
    assert.equal(canExpress('java', spec('zstd:22')), true)
    assert.equal(canExpress('squeeze', spec('zstd:19')), true)
  })

  it('Filebeat has no zstd and sets a level for gzip only; Logstash and kafkajs set no level at all', () => {
    assert.equal(canExpress('filebeat', spec('zstd:3')), false)
    assert.equal(nearestExpressible('filebeat', spec('zstd:3')), null)
    assert.equal(canExpress('filebeat', spec('gzip:9')), true)
    assert.equal(canExpress('logstash', spec('zstd:3')), true, "the Java client's default zstd level")
    assert.equal(canExpress('logstash', spec('zstd:6')), false)
    assert.deepEqual(nearestExpressible('logstash', spec('zstd:19')), { codec: 'zstd', level: 3 })
    assert.equal(canExpress('kafkajs', spec('gzip:9')), false)
    assert.equal(canExpress('kafkajs', spec('gzip:6')), true)
  })

  it(
    "Java cannot set LZ4HC 9 (its level 9 selects the fast compressor); librdkafka's lz4 levels under 3 are " +
      'the fast one',
    () => {
      assert.equal(canExpress('java', spec('lz4:9')), false)
      assert.deepEqual(nearestExpressible('java', spec('lz4:9')), { codec: 'lz4', level: 8 })
      assert.equal(canExpress('java', spec('lz4:1')), true)
      assert.equal(canExpress('librdkafka', spec('lz4:2')), false)
      assert.equal(canExpress('librdkafka', spec('lz4:1')), true)
      assert.equal(canExpress('librdkafka', spec('lz4:12')), true)
    }
  )

  it('only squeeze writes codec:adaptive', () => {
    for (const client of CLIENT_NAMES)
      assert.equal(canExpress(client, spec('zstd:adaptive')), client === 'squeeze', client)
  })

  it('adds zstd:12 beside zstd:19 for librdkafka, once, and nothing a client can already write', () => {
    const added = targetsNeededFor(['none', 'zstd:3', 'zstd:19'].map(spec), [
      'java',
      'librdkafka',
      'vector',
      'logstash'
    ])
    assert.deepEqual(added, [{ codec: 'zstd', level: 12 }])
    assert.deepEqual(targetsNeededFor(['none', 'zstd:3'].map(spec), [...CLIENT_NAMES]), [])
  })

  it('parses --client: all, a list, and refuses unknown names and repeats in one line', () => {
    assert.deepEqual(parseClients(undefined), [...CLIENT_NAMES])
    assert.deepEqual(parseClients('all'), [...CLIENT_NAMES])
    assert.deepEqual(parseClients('java, librdkafka'), ['java', 'librdkafka'])
    assert.throws(() => parseClients('java,rdkafka'), /unknown --client rdkafka: use all or any of java/)
    assert.throws(() => parseClients('java,java'), /same client twice/)
  })
})

describe('bestTargetPerClient', () => {
  const rule = (rows: Parameters<typeof recommend>[0]): ReturnType<typeof recommend> =>
    recommend(rows, { ingressBytesPerSecond: null, replicationFactor: 3, consumers: 1, cpuBudgetSecondsPerGiB: 200 })
  const rows = [...SAMPLE_TARGETS, target('zstd:12', 7.8 * MIB, 30)]

  it("picks by the recommendation's rule within what each client can write, and says what the limit costs", () => {
    // Within 200 CPU s/GiB zstd:19 stores least overall; librdkafka's smallest within the budget is zstd:12.
    const [java, rdkafka, filebeat] = bestTargetPerClient(rows, ['java', 'librdkafka', 'filebeat'], rule)
    assert.equal(java?.target, 'zstd:19')
    assert.equal(java?.limited, false)
    assert.equal(java?.text, 'java: zstd:19, as recommended')
    assert.equal(rdkafka?.overall, 'zstd:19')
    assert.equal(rdkafka?.limited, true)
    assert.equal(rdkafka?.target, 'zstd:12')
    assert.equal(rdkafka?.storedShareOfOverall?.toFixed(2), '1.04')
    assert.equal(rdkafka?.text, 'librdkafka cannot set zstd:19; zstd:12 stores 1.04x of it')
    assert.equal(
      rdkafka?.ratio,
      rows.find((r) => r.target === 'zstd:12')?.ratio,
      "the figures of the same run's zstd:12 row"
    )
    // Filebeat has no zstd: its smallest within the budget is a gzip.
    assert.equal(filebeat?.target, 'gzip:9')
    assert.equal(filebeat?.text, `filebeat cannot set zstd:19; gzip:9 stores ${(11.5 / 7.5).toFixed(2)}x of it`)
  })

  it(
    "falls back to the row nearest the overall pick when the rule's limit cannot be met within the client's " + 'rows',
    () => {
      const ratio13 = (r: Parameters<typeof recommend>[0]): ReturnType<typeof recommend> =>
        recommend(r, { ingressBytesPerSecond: null, replicationFactor: 3, consumers: 1, targetRatio: 13 })
      const [rdkafka, kafkajs, filebeat] = bestTargetPerClient(rows, ['librdkafka', 'kafkajs', 'filebeat'], ratio13)
      assert.equal(rdkafka?.overall, 'zstd:19')
      assert.equal(rdkafka?.target, 'zstd:12')
      assert.equal(kafkajs?.text, `kafkajs cannot set zstd:19; zstd:3 stores ${(10 / 7.5).toFixed(2)}x of it`)
      assert.equal(filebeat?.target, null, 'Filebeat has no zstd and none of its targets reaches ratio 13')
      assert.equal(filebeat?.text, "filebeat: none of the 4 targets it can write meets the recommendation's limit")
      const lz4Only = bestTargetPerClient([target('zstd:3', 10 * MIB, 2)], ['filebeat'], ratio13)
      assert.match(
        lz4Only[0]?.text ?? '',
        /filebeat can write none of the measured targets \(it writes none, gzip, snappy, lz4\)/
      )
    }
  )

  it('with the knee rule a client that can set the knee gets it; one that cannot gets its own knee', () => {
    const knee = (r: Parameters<typeof recommend>[0]): ReturnType<typeof recommend> =>
      recommend(r, { ingressBytesPerSecond: null, replicationFactor: 1, consumers: 1 })
    const picks = bestTargetPerClient(rows, ['squeeze', 'filebeat'], knee)
    assert.equal(picks[0]?.target, knee(rows)?.target)
    assert.equal(picks[0]?.limited, false)
    assert.equal(picks[1]?.limited, true)
    const filebeatRows = rows.filter((r) => ['none', 'lz4:1', 'gzip:6', 'gzip:9'].includes(r.target))
    assert.equal(picks[1]?.target, knee(filebeatRows)?.target)
  })
})
