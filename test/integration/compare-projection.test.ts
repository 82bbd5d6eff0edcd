import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it, type TestContext } from 'node:test'
import { Ajv } from 'ajv'
import kafkajs, { type Admin } from 'kafkajs'
import { installKafkajsDecoders } from '../../lib/codecs/kafkajs-plugin.js'
import { currentBaseline } from '../../lib/compare/baseline.js'
import type { CompareReport, CurrentBaseline } from '../../lib/compare/compare-report.js'
import { runProjection } from '../../lib/compare/projection/run-projection.js'
import { scanSourceBatches } from '../../lib/compare/source-batches.js'
import { runCompare } from '../../lib/compare/run-compare.js'
import { COPIER_PRODUCER_DEFAULTS } from '../../lib/copier/copier.js'
import { parseTargets } from '../../lib/copier/targets.js'
import { formatFor, type LogKind } from '../../lib/formats/index.js'
import type { CompareReportJson } from '../../lib/report/compare-json.js'
import type { EmbeddedBroker } from '../../lib/embedded-broker/kraft-broker.js'
import { createCluster, type KafkaConnectionConfig } from '../../lib/kafka/connection.js'
import { describeLogDirs } from '../../lib/kafka/describe-log-dirs.js'
import { createTopicsAndWait } from '../../lib/kafka/topics.js'
import { createLogger } from '../../lib/log/logger.js'
import { parseCodecSpec } from '../../lib/codecs/index.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../../lib/producer/producer.js'
import { CORPUS_FIXTURES, corpusLines } from '../helpers/corpus.js'
import type { TestTls } from '../helpers/tls.js'
import { startAclBroker, type AclBroker } from '../helpers/acl-broker.js'
import type { OnProgress } from '../../lib/progress/progress.js'

/** Enough of each fixture for several batches at the batch.size below, little enough for CI. */
const LINES_PER_FIXTURE = 1200
const TARGETS = 'none,gzip:6,lz4,zstd:3'
/** linger.ms far beyond the copy's duration: both modes then close batches on batch.size alone. */
const SETTINGS = { lingerMs: 600_000, batchSizeBytes: 32 * 1024 }

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))
/** A SCRAM user the ACL test grants Read and Describe on one topic, and nothing else. */
const READER = { name: 'reader', password: 'reader-Scram256-4e1b7a' }
const log = createLogger({ level: (process.env.SQUEEZE_TEST_LOG_LEVEL ?? 'silent') as 'silent', name: 'squeeze-test' })

// One broker for the whole file: ACLs enforced (StandardAuthorizer), a SASL_SSL listener for the reader, and the
// PLAINTEXT listener (principal ANONYMOUS, a super user) for setting up topics, ACLs and the copy-mode baseline.
let broker: EmbeddedBroker
let tls: TestTls
let connection: KafkaConnectionConfig
let admin: Admin
let dir: string
let started: AclBroker | undefined
before(async () => {
  // The copier reads the lz4 source through kafkajs, which needs squeeze's codecs (as the CLI installs them).
  installKafkajsDecoders()
  started = await startAclBroker(READER, 'squeeze-projection-', log)
  ;({ broker, tls, connection, admin, dir } = started)
})
after(async () => {
  await started?.stop()
})

async function createTopic(t: TestContext, partitions: number): Promise<string> {
  const topic = `projection-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6)}`
  await createTopicsAndWait(admin, [{ topic, numPartitions: partitions, replicationFactor: 1 }])
  t.after(() => admin.deleteTopics({ topics: [topic] }).catch(() => undefined))
  return topic
}

/** Sends `values` per partition (index = partition), one millisecond apart from a minute ago; returns the counts. */
async function fill(topic: string, perPartition: ReadonlyArray<readonly Buffer[]>): Promise<number[]> {
  const producer = new Producer(
    { ...DEFAULT_PRODUCER_CONFIG, codec: { codec: 'lz4', level: 1 }, lingerMs: 5 },
    { cluster: createCluster(connection, log), log }
  )
  await producer.start()
  try {
    const start = Date.now() - 60_000
    for (const [partition, values] of perPartition.entries())
      await producer.sendMany(values.map((value, i) => ({ topic, partition, key: null, value, timestamp: start + i })))
    await producer.flush()
  } finally {
    await producer.close()
  }
  return perPartition.map((v) => v.length)
}

/** The first `limit` lines of a fixture that its format encodes (what the file source sends; it skips the rest). */
function encodedLines(file: string, kind: LogKind, limit: number): Buffer[] {
  const format = formatFor(kind)
  return corpusLines(file)
    .slice(0, limit)
    .flatMap((line) => {
      try {
        return [format.encodeLine(line)]
      } catch {
        return []
      }
    })
}

function squeeze(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, KAFKA_BROKERS: '', ...env }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr })
      }
    )
  })
}

describe('compare --mode projection against the copy mode', () => {
  it('on every corpus fixture (one per partition), projected stored bytes per target are within 2% of what the broker stored for the copies', async (t) => {
    // One topic, fixture i in partition i: one copy run and one projection cover every fixture.
    const topic = await createTopic(t, CORPUS_FIXTURES.length)
    const counts = await fill(
      topic,
      CORPUS_FIXTURES.map(({ file, kind }) => encodedLines(file, kind, LINES_PER_FIXTURE))
    )
    const targets = parseTargets(TARGETS, topic)
    const common = {
      connection,
      sourceTopic: topic,
      sourceDescription: { kind: 'topic' as const, description: topic },
      targets,
      rateEvidence: { kind: 'topic' as const, lookbackMs: 3_600_000 },
      consumers: 1,
      version: 'test',
      log
    }
    const copied = (
      await runCompare({
        ...common,
        format: null,
        producer: { ...DEFAULT_PRODUCER_CONFIG, ...COPIER_PRODUCER_DEFAULTS, ...SETTINGS },
        keepTopics: true
      })
    ).report
    t.after(() => admin.deleteTopics({ topics: targets.map((x) => x.topic) }).catch(() => undefined))
    const projection = await runProjection({ ...common, format: null, batching: SETTINGS, threads: 2 })
    const cluster = createCluster(connection, log)
    await cluster.connect()
    const sizes = await describeLogDirs(
      cluster,
      targets.map((x) => x.topic)
    ).finally(() => cluster.disconnect())

    assert.equal(projection.report.mode, 'projection')
    assert.equal(
      projection.report.source.records,
      counts.reduce((a, b) => a + b, 0)
    )
    for (const target of targets) {
      const name = copied.targets.find((x) => x.topic === target.topic)?.target as string
      const projected = projection.report.targets.find((x) => x.target === name)
      assert.ok(projected !== undefined, name)
      assert.equal(projected.records, projection.report.source.records, `${name}: every record projected`)
      assert.equal(projected.recompression.verdict, 'not-checked')
      const byPartition = projection.storedBytesByPartition.get(name) ?? {}
      for (const [partition, { file }] of CORPUS_FIXTURES.entries()) {
        const stored = sizes.find((s) => s.topic === target.topic && s.partition === partition)?.sizeBytes ?? 0
        const mine = byPartition[partition] ?? 0
        const off = Math.abs(mine - stored) / stored
        assert.ok(
          off <= 0.02,
          `${file} ${name}: projected ${mine} bytes, the broker stored ${stored} (${(off * 100).toFixed(2)}% apart)`
        )
      }
    }
    assert.equal(
      new Set(projection.report.targets.map((x) => x.digest)).size,
      1,
      'every codec round-tripped the same records'
    )
  })
})

describe('compare on a secured cluster (SASL_SSL, ACLs enforced)', () => {
  it('a user with only Read and Describe on the topic runs the projection; copy mode tells it in one line which ACL is missing', async (t) => {
    const topic = await createTopic(t, 2)
    const values = encodedLines('nginx_error_chemfh_2023.log', 'nginx-error', Number.POSITIVE_INFINITY)
    await fill(topic, [values.filter((_, i) => i % 2 === 0), values.filter((_, i) => i % 2 === 1)])
    await admin.createAcls({
      acl: [kafkajs.AclOperationTypes.READ, kafkajs.AclOperationTypes.DESCRIBE].map((operation) => ({
        resourceType: kafkajs.AclResourceTypes.TOPIC,
        resourceName: topic,
        resourcePatternType: kafkajs.ResourcePatternTypes.LITERAL,
        principal: `User:${READER.name}`,
        host: '*',
        operation,
        permissionType: kafkajs.AclPermissionTypes.ALLOW
      }))
    })
    const auth = {
      args: [
        'compare',
        '--brokers',
        broker.saslSslBootstrap as string,
        '--ssl-ca-file',
        tls.caFile,
        '--security-protocol',
        'SASL_SSL',
        '--sasl-mechanism',
        'SCRAM-SHA-256',
        '--topic',
        topic,
        '--targets',
        'none,zstd:3'
      ],
      env: { KAFKA_SASL_USERNAME: READER.name, KAFKA_SASL_PASSWORD: READER.password }
    }
    const json = join(dir, `${topic}.json`)
    const chart = join(dir, `${topic}.svg`)
    const projected = await squeeze(
      [
        ...auth.args,
        '--mode',
        'projection',
        '--threads',
        '2',
        '--json',
        json,
        '--chart',
        chart,
        '--linger-ms',
        '0,1000',
        '--batch-size',
        '16KiB,64KiB'
      ],
      auth.env
    )
    assert.equal(projected.code, 0, projected.stderr)
    assert.match(projected.stdout, /^mode: read-only projection/)
    const report = JSON.parse(readFileSync(json, 'utf8')) as CompareReportJson
    const validate = new Ajv({ allErrors: true, strict: true }).compile(
      JSON.parse(
        readFileSync(fileURLToPath(new URL('../../../schema/compare-report.schema.json', import.meta.url)), 'utf8')
      ) as object
    )
    assert.equal(validate(report), true, JSON.stringify(validate.errors))
    assert.equal(report.mode, 'projection')
    assert.equal(report.source.records, values.length)
    assert.deepEqual(
      report.targets.map((x) => x.recompression.verdict),
      ['not-checked', 'not-checked']
    )
    assert.equal(
      report.projection?.sweep?.cells.length,
      2 * 2 * 2,
      'the what-if: 2 linger.ms x 2 batch.size x 2 targets'
    )
    assert.match(projected.stdout, /batching what-if:/)
    assert.match(readFileSync(join(dir, `${topic}.batching.svg`), 'utf8'), /^<svg /)

    const copied = await squeeze(auth.args, auth.env)
    assert.notEqual(copied.code, 0)
    const lines = copied.stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{'))
    assert.equal(lines.length, 1, copied.stderr)
    assert.match(lines[0] as string, new RegExp(`needs Create on the destination topics .*"${topic}\\."`))
    assert.match(lines[0] as string, /--mode projection .* only Read and Describe/)
    const left = (await admin.listTopics()).filter((name) => name.startsWith(`${topic}.`))
    assert.deepEqual(left, [], 'neither mode left a topic behind')
  })
})

describe('compare --mode projection --sample on a topic whose traffic changed over time', () => {
  it("the windows' 95% interval covers the whole topic's ratio; the first N records' interval does not", async (t) => {
    const topic = await createTopic(t, 2)
    // Three eras: web access logs, then DNS logs, then journald: each compresses differently.
    const eras = (
      [
        'access_apache_semicomplete_2015.log',
        'dns_zeek_wrccdc2018_first8000.log',
        'journald_fedora37_rpi4_system.json'
      ] as const
    ).flatMap((file) =>
      encodedLines(
        file,
        CORPUS_FIXTURES.find((f) => f.file === file)?.kind ?? 'http',
        file.startsWith('journald') ? 1800 : 900
      )
    )
    await fill(topic, [eras.filter((_, i) => i % 2 === 0), eras.filter((_, i) => i % 2 === 1)])
    const run = (extra: Partial<Parameters<typeof runProjection>[0]>) =>
      runProjection({
        connection,
        sourceTopic: topic,
        sourceDescription: { kind: 'topic', description: topic },
        targets: parseTargets('zstd:3', topic),
        format: null,
        rateEvidence: { kind: 'topic', lookbackMs: 3_600_000 },
        batching: { lingerMs: 100, batchSizeBytes: 8 * 1024 },
        threads: 1,
        consumers: 1,
        version: 'test',
        log,
        ...extra
      })
    const whole = (await run({})).report
    const sampled = (await run({ sample: { records: 600, windows: 6 } })).report
    const firstN = (await run({ maxRecords: 600 })).report
    const ratio = whole.targets[0]?.ratio ?? 0
    const interval = (r: typeof whole) => r.projection?.intervals[0] ?? { low: 0, high: 0 }
    const plan = sampled.projection?.sampling
    assert.ok(plan !== null && plan !== undefined)
    assert.equal(plan.partitions, 2)
    assert.equal(plan.windows.length, 12, 'six windows in each partition')
    assert.equal(plan.topicRecords, eras.length)
    const read = plan.windows.reduce((n, w) => n + w.records, 0)
    assert.ok(Math.abs(read - 600) <= 12, `${read} records sampled`)
    assert.ok(
      interval(sampled).low <= ratio && ratio <= interval(sampled).high,
      `sampled ${JSON.stringify(interval(sampled))} covers ${ratio}`
    )
    assert.ok(
      ratio < interval(firstN).low || ratio > interval(firstN).high,
      `first 600 ${JSON.stringify(interval(firstN))} misses ${ratio}`
    )
  })
})

/** The figures of a baseline that do not depend on CPU timing. */
function withoutCpu(current: CurrentBaseline | null): unknown {
  assert.ok(current !== null, 'a baseline')
  return { ...current, row: { ...current.row, decompressCpuSecondsPerGiB: 0 } }
}

function projectionOf(topic: string, onProgress?: OnProgress): ReturnType<typeof runProjection> {
  return runProjection({
    connection,
    sourceTopic: topic,
    sourceDescription: { kind: 'topic', description: topic },
    targets: parseTargets('none,zstd:3', topic),
    format: null,
    rateEvidence: { kind: 'topic', lookbackMs: 3_600_000 },
    batching: SETTINGS,
    threads: 2,
    consumers: 1,
    version: 'test',
    log,
    ...(onProgress === undefined ? {} : { onProgress })
  })
}

/**
 * Appends `count` records to partition 0 and returns once they are acknowledged, blocking this thread: a
 * projection's progress callback can then change the topic at an exact point of the run.
 */
function appendBlocking(topic: string, count: number): void {
  const script = `
    const { DEFAULT_PRODUCER_CONFIG, Producer } = await import(${JSON.stringify(new URL('../../lib/producer/producer.js', import.meta.url).href)})
    const { createCluster, DEFAULT_CONNECTION } = await import(${JSON.stringify(new URL('../../lib/kafka/connection.js', import.meta.url).href)})
    const { createLogger } = await import(${JSON.stringify(new URL('../../lib/log/logger.js', import.meta.url).href)})
    const log = createLogger({ level: 'silent', name: 'append' })
    const producer = new Producer({ ...DEFAULT_PRODUCER_CONFIG, codec: { codec: 'lz4', level: 1 }, lingerMs: 5, compressionThreads: 0 }, { cluster: createCluster({ ...DEFAULT_CONNECTION, brokers: [${JSON.stringify(broker.bootstrap)}] }, log), log })
    producer.onDeliveryFailure((failure) => { console.error(failure); process.exit(1) })
    await producer.start()
    await producer.sendMany(Array.from({ length: ${count} }, (_, i) => ({ topic: ${JSON.stringify(topic)}, partition: 0, key: null, value: Buffer.from('appended while compare ran ' + i) })))
    await producer.flush()
    await producer.close()`
  execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    timeout: 120_000,
    stdio: ['ignore', 'ignore', 'inherit']
  })
}

describe('compare --mode projection: the "current (as stored)" baseline comes from the same read as the records', () => {
  it("with aborted and committed transactions and two codecs, the baseline is what a scan of the stored batches gives, and the log's size", async (t) => {
    const topic = await createTopic(t, 2)
    const values = encodedLines('access_apache_semicomplete_2015.log', 'http', 600)
    assert.equal(values.length, 600)
    await fill(topic, [values.slice(0, 300), values.slice(300)])
    const producer = new Producer(
      { ...DEFAULT_PRODUCER_CONFIG, codec: parseCodecSpec('gzip:6'), lingerMs: 5 },
      { cluster: createCluster(connection, log), log, transactionalId: `tx-${topic}` }
    )
    await producer.start()
    t.after(() => producer.close())
    for (const outcome of ['abort', 'commit'] as const) {
      producer.beginTransaction()
      await producer.sendMany(values.slice(0, 100).map((value, i) => ({ topic, partition: i % 2, key: null, value })))
      if (outcome === 'abort') await producer.abortTransaction()
      else await producer.commitTransaction()
    }

    const { report } = await projectionOf(topic)
    assert.equal(report.source.records, 700, "the aborted transaction's records are not projected")
    const scanned = currentBaseline(await scanSourceBatches(connection, topic, undefined, log), contextOf(report))
    assert.deepEqual(withoutCpu(report.current), withoutCpu(scanned))
    assert.deepEqual(report.current?.row.codecs.map((c) => c.codec).sort(), ['gzip', 'lz4'])
    assert.equal(report.current?.row.records, 800, 'aborted records are stored too')
    const cluster = createCluster(connection, log)
    await cluster.connect()
    const sizes = await describeLogDirs(cluster, [topic]).finally(() => cluster.disconnect())
    assert.equal(
      report.current?.row.storedBytes,
      sizes.reduce((n, s) => n + s.sizeBytes, 0)
    )
  })

  it('on a topic that grows while compare runs, the baseline covers exactly the records projected', async (t) => {
    const topic = await createTopic(t, 2)
    await fill(topic, [
      encodedLines('nginx_error_chemfh_2023.log', 'nginx-error', 300),
      encodedLines('syslog_mtail_sftp_chroot.log', 'syslog', 200)
    ])
    let appended = false
    // Once the records are read, more arrive: a second read of the stored batches would count them.
    const { report } = await projectionOf(topic, (progress) => {
      if (!appended && progress.phase === 'ingest rate') {
        appended = true
        appendBlocking(topic, 500)
      }
    })
    assert.ok(appended, 'the topic grew during the run')
    assert.equal(report.current?.row.records, report.source.records)
    const offsets = await admin.fetchTopicOffsets(topic)
    assert.equal(
      offsets.reduce((n, o) => n + Number(o.high), 0),
      report.source.records + 500
    )
  })
})

function contextOf(report: CompareReport): Parameters<typeof currentBaseline>[1] {
  return {
    targets: report.targets,
    recommendation: report.recommendation,
    ingestRate: report.source.ingestRate,
    uncompressedBytesPerRecord: report.source.uncompressedBytes / report.source.records,
    replicationFactor: report.settings.replicationFactor,
    consumers: report.settings.consumers,
    lingerMs: report.settings.lingerMs,
    batchSizeBytes: report.settings.batchSizeBytes
  }
}
