import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parse as parseToml } from 'smol-toml'
import { parse as parseYaml } from 'yaml'
import { parseCodecSpec } from '../../../lib/codecs/index.js'
import { CLIENT_NAMES } from '../../../lib/apply/client-limits.js'
import {
  batchingSettings,
  javaBatchSize,
  settingsFor,
  type BatchingTarget
} from '../../../lib/apply/client-settings.js'
import { javaBatchSizeFor, simulateJavaBatching } from '../../../lib/apply/java-estimator.js'
import { topicConfigFor } from '../../../lib/apply/topic-config.js'

const BATCHING: BatchingTarget = { lingerMs: 100, batchSizeBytes: 1_048_576, ratio: 5, bytesPerRecord: 250 }
const CTX = { brokers: 'kafka-1:9092,kafka-2:9092', topic: 'prod.access-logs' }
const spec = parseCodecSpec

/** `name=value` lines of a properties file, comments and blanks left out. */
function properties(text: string): Map<string, string> {
  return new Map(
    text
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.startsWith('#'))
      .map((l) => {
        const eq = l.indexOf('=')
        return [l.slice(0, eq), l.slice(eq + 1)] as [string, string]
      })
  )
}

// librdkafka's producer properties, as CONFIGURATION.md names them:
// https://github.com/confluentinc/librdkafka/blob/master/CONFIGURATION.md
const LIBRDKAFKA_PROPERTIES = new Set([
  'bootstrap.servers',
  'compression.codec',
  'compression.level',
  'linger.ms',
  'batch.size',
  'batch.num.messages',
  'message.max.bytes'
])

describe('settings per client', () => {
  it(
    'Java: compression.type, compression.zstd.level (KIP-390) and a batch.size translated for the compressed ' +
      'estimate',
    () => {
      const props = properties(settingsFor('java', spec('zstd:12'), BATCHING, CTX).text)
      assert.deepEqual(
        [...props.keys()],
        ['bootstrap.servers', 'compression.type', 'compression.zstd.level', 'linger.ms', 'batch.size']
      )
      assert.equal(props.get('compression.type'), 'zstd')
      assert.equal(props.get('compression.zstd.level'), '12')
      // 1 MiB uncompressed x 1.05 / ratio 5, plus one 250-byte record: Java counts its estimate of the compressed batch.
      assert.equal(props.get('batch.size'), String(Math.ceil((1_048_576 * 1.05) / 5) + 250))
      assert.equal(javaBatchSize(BATCHING, 'none'), 1_048_576, 'uncompressed batches are counted as they are')
      assert.equal(
        properties(settingsFor('java', spec('lz4:1'), BATCHING, CTX).text).has('compression.lz4.level'),
        false,
        "lz4's fast compressor is Java's default level"
      )
    }
  )

  it("Java with the measured run: the batch.size at which Java's simulated estimator makes the run's batches", () => {
    const run = { records: 50_000, recordBytes: 240, compressedShares: [0.21, 0.19, 0.2] }
    const measured: BatchingTarget = { ...BATCHING, java: { run, meanBatchBytes: 131_000, partitions: 3 } }
    const size = javaBatchSize(measured, 'zstd')
    // A batch opens before its predecessor is drained: the estimate lags one batch.
    assert.equal(size, javaBatchSizeFor(131_000, run, 1))
    assert.ok(simulateJavaBatching(size, run, 1).meanBatchBytes >= 131_000)
    const java = settingsFor('java', spec('zstd:6'), measured, CTX)
    assert.equal(properties(java.text).get('batch.size'), String(size))
    // One open batch per partition and five more, one per request in flight.
    assert.equal(properties(java.text).get('buffer.memory'), String((3 + 5) * size))
    assert.match(settingsFor('logstash', spec('zstd:3'), measured, CTX).text, /buffer_memory => \d+/)
    assert.ok(java.notes.some((n) => n.includes('simulated over this run') && n.includes('50000 records')))
    assert.equal(javaBatchSize(measured, 'none'), BATCHING.batchSizeBytes, 'uncompressed batches need no estimate')
  })

  it(
    'librdkafka: compression.codec, compression.level, and batch.size in uncompressed bytes with room in the ' +
      'record count',
    () => {
      const props = properties(settingsFor('librdkafka', spec('zstd:12'), BATCHING, CTX).text)
      for (const name of props.keys()) assert.ok(LIBRDKAFKA_PROPERTIES.has(name), `${name} is a librdkafka property`)
      assert.equal(props.get('compression.codec'), 'zstd')
      assert.equal(props.get('compression.level'), '12')
      assert.equal(props.get('batch.size'), '1048576')
      assert.equal(
        props.get('message.max.bytes'),
        '1048576',
        'a batch above the 1000000 default needs message.max.bytes raised'
      )
      assert.ok(
        Number(props.get('batch.num.messages')) * 250 >= 1_048_576,
        'the record-count limit does not close batches first'
      )
    }
  )

  it(
    "Vector: a [sinks.x] block that parses as TOML, with the sink's own option names and librdkafka options as " +
      'strings',
    () => {
      // Option names from https://vector.dev/docs/reference/configuration/sinks/kafka/
      const VECTOR_OPTIONS = new Set([
        'type',
        'inputs',
        'bootstrap_servers',
        'topic',
        'compression',
        'encoding',
        'librdkafka_options'
      ])
      const parsed = parseToml(settingsFor('vector', spec('zstd:12'), BATCHING, CTX).text) as {
        sinks: Record<string, Record<string, unknown>>
      }
      const sink = parsed.sinks.kafka_out
      assert.ok(sink !== undefined)
      for (const key of Object.keys(sink)) assert.ok(VECTOR_OPTIONS.has(key), `${key} is a Vector kafka sink option`)
      assert.equal(sink.type, 'kafka')
      assert.equal(sink.compression, 'zstd')
      assert.equal(sink.bootstrap_servers, CTX.brokers)
      const options = sink.librdkafka_options as Record<string, unknown>
      for (const [name, value] of Object.entries(options)) {
        assert.ok(LIBRDKAFKA_PROPERTIES.has(name), `${name} is a librdkafka property`)
        assert.equal(typeof value, 'string', 'librdkafka_options takes string values')
      }
      assert.equal(options['compression.level'], '12')
    }
  )

  it(
    'Filebeat: an output.kafka block that parses as YAML; compression_level only for gzip, bulk_max_size in ' +
      'events',
    () => {
      // Option names from https://www.elastic.co/guide/en/beats/filebeat/current/kafka-output.html
      const FILEBEAT_OPTIONS = new Set([
        'hosts',
        'topic',
        'compression',
        'compression_level',
        'bulk_max_size',
        'bulk_flush_frequency'
      ])
      const gzip = parseYaml(settingsFor('filebeat', spec('gzip:9'), BATCHING, CTX).text) as {
        'output.kafka': Record<string, unknown>
      }
      const out = gzip['output.kafka']
      for (const key of Object.keys(out))
        assert.ok(FILEBEAT_OPTIONS.has(key), `${key} is a Filebeat kafka output option`)
      assert.deepEqual(out.hosts, [CTX.brokers])
      assert.equal(out.compression, 'gzip')
      assert.equal(out.compression_level, 9)
      assert.equal(out.bulk_max_size, Math.ceil(1_048_576 / 250))
      assert.equal(out.bulk_flush_frequency, '100ms')
      const lz4 = parseYaml(settingsFor('filebeat', spec('lz4:1'), BATCHING, CTX).text) as {
        'output.kafka': Record<string, unknown>
      }
      assert.equal('compression_level' in lz4['output.kafka'], false)
    }
  )

  it('Fluent Bit: an [OUTPUT] section of the kafka plugin whose rdkafka.* keys are librdkafka properties', () => {
    // Keys from https://docs.fluentbit.io/manual/pipeline/outputs/kafka (rdkafka.{property} passes librdkafka
    // properties)
    const FLUENT_BIT_KEYS = new Set(['Name', 'Match', 'Brokers', 'Topics'])
    const lines = settingsFor('fluent-bit', spec('zstd:6'), BATCHING, CTX).text.trim().split('\n')
    assert.equal(lines[0], '[OUTPUT]')
    const entries = lines.slice(1).map((l) => l.trim().split(/\s+/) as [string, string])
    for (const [key, value] of entries) {
      assert.ok(value !== undefined && value !== '', `${key} has a value`)
      assert.ok(
        FLUENT_BIT_KEYS.has(key) ||
          (key.startsWith('rdkafka.') && LIBRDKAFKA_PROPERTIES.has(key.slice('rdkafka.'.length))),
        `${key} is a Fluent Bit kafka key`
      )
    }
    assert.deepEqual(
      entries.find(([k]) => k === 'Name'),
      ['Name', 'kafka']
    )
    assert.deepEqual(
      entries.find(([k]) => k === 'rdkafka.compression.level'),
      ['rdkafka.compression.level', '6']
    )
  })

  it("Logstash: an output { kafka { } } block with the plugin's option names and no level", () => {
    // Option names from https://www.elastic.co/guide/en/logstash/current/plugins-outputs-kafka.html
    const LOGSTASH_OPTIONS = new Set([
      'bootstrap_servers',
      'topic_id',
      'compression_type',
      'linger_ms',
      'batch_size',
      'buffer_memory'
    ])
    const text = settingsFor('logstash', spec('zstd:3'), BATCHING, CTX).text
    assert.match(text, /^output \{\n {2}kafka \{\n[\s\S]*\n {2}\}\n\}\n$/)
    const options = [...text.matchAll(/^ {4}(\w+) => (.+)$/gm)].map((m) => [m[1], m[2]] as [string, string])
    for (const [name] of options) assert.ok(LOGSTASH_OPTIONS.has(name), `${name} is a Logstash kafka output option`)
    assert.deepEqual(new Map(options).get('compression_type'), '"zstd"')
    assert.equal(
      new Map(options).get('batch_size'),
      String(javaBatchSize(BATCHING, 'zstd')),
      "batch_size is the Java producer's batch.size"
    )
  })

  it('franz-go, Sarama, kafkajs and squeeze name their own options', () => {
    assert.match(
      settingsFor('franz-go', spec('zstd:12'), BATCHING, CTX).text,
      new RegExp(
        [
          'kgo\\.ProducerBatchCompression\\(kgo\\.ZstdCompression\\(\\)\\.WithLevel\\(12\\)\\),',
          'kgo\\.ProducerLinger\\(100 \\* time\\.Millisecond\\),',
          'kgo\\.ProducerBatchMaxBytes\\(1048576\\),'
        ].join('\n')
      )
    )
    const sarama = settingsFor('sarama', spec('gzip:9'), BATCHING, CTX).text
    assert.match(
      sarama,
      /config\.Producer\.Compression = sarama\.CompressionGZIP\nconfig\.Producer\.CompressionLevel = 9\n/
    )
    assert.match(sarama, /config\.Producer\.Flush\.Frequency = 100 \* time\.Millisecond/)
    assert.match(settingsFor('kafkajs', spec('gzip:6'), BATCHING, CTX).text, /compression: CompressionTypes\.GZIP/)
    assert.equal(
      settingsFor('squeeze', spec('zstd:12'), BATCHING, CTX).text,
      'squeeze produce --brokers kafka-1:9092,kafka-2:9092 --topic prod.access-logs --codec zstd:12 -X ' +
        'linger.ms=100 -X batch.size=1048576\n'
    )
  })

  it("gives batching advice in every client's own names and units", () => {
    const advice = Object.fromEntries(
      CLIENT_NAMES.map((c) => [c, batchingSettings(c, { ...BATCHING, lingerMs: 500 }, 'zstd').join('  ')])
    )
    assert.match(advice.java ?? '', /linger\.ms=500 {2}batch\.size=220451/)
    assert.match(advice.librdkafka ?? '', /linger\.ms=500/)
    assert.match(advice['franz-go'] ?? '', /ProducerLinger\(500 \* time\.Millisecond\)/)
    assert.match(advice.sarama ?? '', /Flush\.Frequency = 500 \* time\.Millisecond/)
    assert.match(advice.logstash ?? '', /linger_ms => 500/)
    assert.match(advice.filebeat ?? '', /bulk_flush_frequency: 500ms/)
    assert.match(advice['fluent-bit'] ?? '', /rdkafka\.linger\.ms 500/)
    assert.match(advice.vector ?? '', /"linger\.ms" = "500"/)
    assert.match(advice.squeeze ?? '', /-X linger\.ms=500/)
    assert.match(advice.kafkajs ?? '', /messages per producer\.send\(\) call/)
  })
})

describe('topic side', () => {
  it('keeps compression.type=producer by default, and prints the kafka-configs.sh command', () => {
    const keep = topicConfigFor('producer', spec('zstd:12'), 'logs', 'b:9092')
    assert.deepEqual(keep.configs, [{ name: 'compression.type', value: 'producer' }])
    assert.equal(
      keep.command,
      'kafka-configs.sh --bootstrap-server b:9092 --alter --entity-type topics --entity-name logs --add-config ' +
        'compression.type=producer'
    )
  })

  it('a codec on the topic sets its level too and says the broker recompresses other codecs', () => {
    const set = topicConfigFor('codec', spec('zstd:12'), 'logs', 'b:9092')
    assert.deepEqual(set.configs, [
      { name: 'compression.type', value: 'zstd' },
      { name: 'compression.zstd.level', value: '12' }
    ])
    assert.match(set.command, /--add-config compression\.type=zstd,compression\.zstd\.level=12$/)
    assert.match(set.text, /recompresses every batch that arrives in another codec/)
    assert.match(set.text, /producers must send zstd to avoid a second compression/)
  })
})
