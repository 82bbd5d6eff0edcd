import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { Ajv } from 'ajv'
import kafkajs, { type Admin } from 'kafkajs'
import type { AuditReport, AuditTopic } from '../../lib/audit/audit-report.js'
import { installKafkajsDecoders } from '../../lib/codecs/kafkajs-plugin.js'
import { parseCodecSpec, type CodecSpec } from '../../lib/codecs/index.js'
import { runCompare } from '../../lib/compare/run-compare.js'
import { COPIER_PRODUCER_DEFAULTS } from '../../lib/copier/copier.js'
import { parseTargets } from '../../lib/copier/targets.js'
import type { EmbeddedBroker } from '../../lib/embedded-broker/kraft-broker.js'
import { KafkaMainClasses, runKafkaJavaTool } from '../../lib/embedded-broker/java-tools.js'
import { createCluster, type KafkaConnectionConfig } from '../../lib/kafka/connection.js'
import { createTopicsAndWait } from '../../lib/kafka/topics.js'
import { createLogger } from '../../lib/log/logger.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../../lib/producer/producer.js'
import { parseDumpLogSegments } from '../helpers/dump-log-segments.js'
import { corpusLines } from '../helpers/corpus.js'
import { runSqueeze } from '../helpers/squeeze-cli.js'
import type { TestTls } from '../helpers/tls.js'
import { startAclBroker, type AclBroker } from '../helpers/acl-broker.js'

/** The audit's user: Describe, DescribeConfigs and Read on the test's topics (but one), Describe on groups. */
const AUDITOR = { name: 'auditor', password: 'auditor-Scram256-71c0de' }
const TARGETS = 'none,lz4,zstd:3,gzip:6'
/** linger.ms far beyond any fill: the copy and the projection both close batches on batch.size alone. */
const BATCHING = { lingerMs: 600_000, batchSizeBytes: 16 * 1024 }
const RECORDS = 1500
const log = createLogger({ level: (process.env.SQUEEZE_TEST_LOG_LEVEL ?? 'silent') as 'silent', name: 'squeeze-test' })

const ACCESS = corpusLines('access_apache_semicomplete_2015.log')
const ZEEK = corpusLines('dns_zeek_wrccdc2018_first8000.log')
const JOURNALD = corpusLines('journald_fedora37_rpi4_system.json')

let broker: EmbeddedBroker
let tls: TestTls
let connection: KafkaConnectionConfig
let admin: Admin
let dir: string
const run = `audit-${Date.now().toString(36)}`
const name = (suffix: string): string => `${run}-${suffix}`

/** What each topic was written with, by whom, and what the audit must find. */
interface Planned {
  readonly topic: string
  /** The codecs its stored batches must have. */
  readonly codecs: readonly string[]
  readonly groups: number
}
const planned: Planned[] = []

let started: AclBroker | undefined
before(async () => {
  installKafkajsDecoders()
  started = await startAclBroker(AUDITOR, 'squeeze-audit-', log)
  ;({ broker, tls, connection, admin, dir } = started)
  await fillCluster()
})
after(async () => {
  await started?.stop()
})

function lines(source: readonly string[], from: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => source[(from + i) % source.length] as string)
}

async function create(topic: string, configs: Record<string, string> = {}): Promise<void> {
  await createTopicsAndWait(admin, [
    {
      topic,
      numPartitions: 2,
      replicationFactor: 1,
      configEntries: Object.entries(configs).map(([n, value]) => ({ name: n, value }))
    }
  ])
}

/** Sends through squeeze's producer, each topic with its codec, records one millisecond apart from a minute ago. */
async function squeezeWrites(
  topics: ReadonlyArray<{ topic: string; codec: CodecSpec; values: readonly string[]; keyed?: boolean }>
): Promise<void> {
  const producer = new Producer(
    {
      ...DEFAULT_PRODUCER_CONFIG,
      codec: { codec: 'lz4', level: 1 },
      lingerMs: 5,
      topicCodecs: Object.fromEntries(topics.map((t) => [t.topic, t.codec]))
    },
    { cluster: createCluster(connection, log), log }
  )
  await producer.start()
  try {
    const start = Date.now() - 60_000
    for (const t of topics) {
      await producer.sendMany(
        t.values.map((v, i) => ({
          topic: t.topic,
          partition: i % 2,
          key: t.keyed === true ? Buffer.from(`k${i % 50}`) : null,
          value: Buffer.from(v),
          timestamp: start + i
        }))
      )
    }
    await producer.flush()
  } finally {
    await producer.close()
  }
}

function kcat(topic: string, codec: string, values: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('kcat', ['-P', '-b', broker.bootstrap, '-t', topic, '-z', codec], {
      stdio: ['pipe', 'ignore', 'pipe']
    })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`kcat exited ${code}: ${stderr}`))))
    child.stdin.end(`${values.join('\n')}\n`)
  })
}

async function java(mainClass: string, args: string[], input?: string): Promise<string> {
  const result = await runKafkaJavaTool(mainClass, args, input === undefined ? {} : { input })
  assert.equal(result.code, 0, `${mainClass} ${args.join(' ')}:\n${result.stderr}`)
  return result.stdout
}

/** A consumer group that reads `topic` and commits: the classic protocol or KIP-848's consumer protocol. */
async function consumeAsGroup(topic: string, group: string, protocol: 'classic' | 'consumer'): Promise<void> {
  await java(KafkaMainClasses.CONSOLE_CONSUMER, [
    '--bootstrap-server',
    broker.bootstrap,
    '--topic',
    topic,
    '--group',
    group,
    '--from-beginning',
    '--max-messages',
    '100',
    '--timeout-ms',
    '60000',
    '--consumer-property',
    `group.protocol=${protocol}`
  ])
}

/** The cluster the audit reads: about thirty topics, written by kcat, the Java producer and squeeze. */
async function fillCluster(): Promise<void> {
  const codecs = ['lz4', 'zstd:3', 'gzip:6', 'snappy', 'none', 'zstd:1']
  const bySqueeze = Array.from({ length: 20 }, (_, i) => ({
    topic: name(`squeeze-${String(i).padStart(2, '0')}`),
    codec: parseCodecSpec(codecs[i % codecs.length] as string),
    values: lines(i % 2 === 0 ? ACCESS : ZEEK, i * 397, RECORDS)
  }))
  const special = {
    compacted: name('compacted'),
    recompressed: name('broker-gzip'),
    forbidden: name('forbidden'),
    classic: name('group-classic'),
    consumer: name('group-consumer'),
    empty: name('empty'),
    tiny: name('tiny'),
    retained: name('retained')
  }
  for (const t of bySqueeze) await create(t.topic)
  await create(special.compacted, { 'cleanup.policy': 'compact' })
  await create(special.recompressed, { 'compression.type': 'gzip' })
  await create(special.retained, { 'retention.ms': '3600000', 'retention.bytes': '1048576' })
  for (const t of [special.forbidden, special.classic, special.consumer, special.empty, special.tiny]) await create(t)
  await squeezeWrites([
    ...bySqueeze,
    { topic: special.compacted, codec: parseCodecSpec('zstd:3'), values: lines(JOURNALD, 0, RECORDS), keyed: true },
    { topic: special.recompressed, codec: parseCodecSpec('lz4'), values: lines(ACCESS, 5000, RECORDS) },
    { topic: special.retained, codec: parseCodecSpec('lz4'), values: lines(ZEEK, 3000, RECORDS) },
    { topic: special.forbidden, codec: parseCodecSpec('lz4'), values: lines(ACCESS, 7000, RECORDS) },
    { topic: special.classic, codec: parseCodecSpec('snappy'), values: lines(ACCESS, 8000, RECORDS) },
    { topic: special.consumer, codec: parseCodecSpec('zstd:3'), values: lines(ZEEK, 6000, RECORDS) },
    { topic: special.tiny, codec: parseCodecSpec('lz4'), values: lines(ACCESS, 0, 20) }
  ])
  const codecName = (spec: CodecSpec): string => spec.codec
  planned.push(...bySqueeze.map((t) => ({ topic: t.topic, codecs: [codecName(t.codec)], groups: 0 })))
  planned.push(
    { topic: special.compacted, codecs: ['zstd'], groups: 0 },
    { topic: special.recompressed, codecs: ['gzip'], groups: 0 },
    { topic: special.retained, codecs: ['lz4'], groups: 0 },
    { topic: special.classic, codecs: ['snappy'], groups: 1 },
    { topic: special.consumer, codecs: ['zstd'], groups: 1 },
    { topic: special.tiny, codecs: ['lz4'], groups: 0 }
  )
  // Foreign producers: kcat (librdkafka) and Kafka's Java producer.
  for (const codec of ['lz4', 'gzip', 'none']) {
    const topic = name(`kcat-${codec}`)
    await create(topic)
    await kcat(topic, codec, lines(ZEEK, 1000, RECORDS))
    planned.push({ topic, codecs: [codec], groups: 0 })
  }
  const javaTopic = name('java-zstd')
  await create(javaTopic)
  await java(
    KafkaMainClasses.CONSOLE_PRODUCER,
    ['--bootstrap-server', broker.bootstrap, '--topic', javaTopic, '--compression-codec', 'zstd'],
    `${lines(ACCESS, 2000, RECORDS).join('\n')}\n`
  )
  planned.push({ topic: javaTopic, codecs: ['zstd'], groups: 0 })
  await consumeAsGroup(special.classic, name('classic-group'), 'classic')
  await consumeAsGroup(special.consumer, name('kip848-group'), 'consumer')

  const topicAcl = (operation: number, permissionType: number, resourceName: string, pattern: number) => ({
    resourceType: kafkajs.AclResourceTypes.TOPIC,
    resourceName,
    resourcePatternType: pattern,
    principal: `User:${AUDITOR.name}`,
    host: '*',
    operation,
    permissionType
  })
  await admin.createAcls({
    acl: [
      ...[
        kafkajs.AclOperationTypes.READ,
        kafkajs.AclOperationTypes.DESCRIBE,
        kafkajs.AclOperationTypes.DESCRIBE_CONFIGS
      ].map((op) => topicAcl(op, kafkajs.AclPermissionTypes.ALLOW, `${run}-`, kafkajs.ResourcePatternTypes.PREFIXED)),
      topicAcl(
        kafkajs.AclOperationTypes.READ,
        kafkajs.AclPermissionTypes.DENY,
        special.forbidden,
        kafkajs.ResourcePatternTypes.LITERAL
      ),
      {
        resourceType: kafkajs.AclResourceTypes.GROUP,
        resourceName: '*',
        resourcePatternType: kafkajs.ResourcePatternTypes.LITERAL,
        principal: `User:${AUDITOR.name}`,
        host: '*',
        operation: kafkajs.AclOperationTypes.DESCRIBE,
        permissionType: kafkajs.AclPermissionTypes.ALLOW
      }
    ]
  })
}

/**
 * --client java,filebeat,librdkafka: every changed topic, and only those, has settings for the three clients in
 * that order; Java can set any target and gets the verdict's; Filebeat has no zstd and gets gzip:6, named in the
 * terminal's notes; the settings point at the audited cluster and topic.
 */
function assertClientSettings(report: AuditReport, stdout: string, markdown: string): void {
  assert.deepEqual(report.settings.clients, ['java', 'filebeat', 'librdkafka'])
  const changed = report.topics.filter((t) => t.status === 'audited' && t.verdict?.action === 'change')
  assert.ok(changed.length > 0, 'some topic is to change')
  for (const t of report.topics) {
    const target = t.verdict?.action === 'change' && t.status === 'audited' ? t.verdict.target : null
    if (target === null) {
      assert.equal(t.applyAs, null, `${t.topic}: no change, no settings`)
      continue
    }
    const clients = t.applyAs?.clients ?? assert.fail(`${t.topic}: settings for its change to ${target}`)
    assert.deepEqual(
      clients.map((c) => c.client),
      ['java', 'filebeat', 'librdkafka']
    )
    const [java, filebeat] = clients
    assert.equal(java?.target, target, `${t.topic}: Java sets the verdict's target`)
    assert.match(
      java?.settings?.text ?? '',
      new RegExp(`^bootstrap\\.servers=${broker.saslSslBootstrap}\\ncompression\\.type=${target.split(':')[0]}\\n`)
    )
    assert.equal(t.applyAs?.topic?.topic, t.topic)
    assert.equal(t.applyAs?.topic?.mode, t.brokerRecompresses ? 'codec' : 'producer')
    assert.match(markdown, new RegExp(`^## ${t.topic}: settings per client$`, 'm'))
    if (target.startsWith('zstd')) {
      assert.equal(filebeat?.limited, true, `${t.topic}: Filebeat has no zstd`)
      assert.ok(
        filebeat?.target === null || ['none', 'lz4:1', 'gzip:6'].includes(filebeat?.target ?? ''),
        `${t.topic}: Filebeat gets a target it can write, or none: ${filebeat?.target}`
      )
      const share = filebeat?.storedShareOfOverall
      const gets = filebeat?.target === null ? 'none it can set' : `${filebeat?.target}, ${share?.toFixed(2)}x`
      assert.match(stdout, new RegExp(`^ {2}${t.topic}: ${target} is beyond filebeat \\(${gets}\\)$`, 'm'))
    }
  }
  assert.match(stdout, new RegExp(`^settings per client: .* prints 3 of ${changed.length} topics$`, 'm'))
}

function auditArgs(extra: readonly string[]): { args: string[]; env: NodeJS.ProcessEnv } {
  return {
    args: [
      'audit',
      '--brokers',
      broker.saslSslBootstrap as string,
      '--ssl-ca-file',
      tls.caFile,
      '--security-protocol',
      'SASL_SSL',
      '--sasl-mechanism',
      'SCRAM-SHA-256',
      '--topics',
      `${run}-.*`,
      '--sample',
      '1MiB',
      '--targets',
      TARGETS,
      '--threads',
      '2',
      '-X',
      `linger.ms=${BATCHING.lingerMs}`,
      '-X',
      `batch.size=${BATCHING.batchSizeBytes}`,
      ...extra
    ],
    env: { KAFKA_SASL_USERNAME: AUDITOR.name, KAFKA_SASL_PASSWORD: AUDITOR.password }
  }
}

/** `name=value` pairs of each topic's dynamic configs, as kafka-configs prints them. */
function parseConfigCommand(stdout: string): Map<string, Map<string, string>> {
  const byTopic = new Map<string, Map<string, string>>()
  let current: Map<string, string> | undefined
  for (const line of stdout.split('\n')) {
    const head = /^Dynamic configs for topic (\S+) are:/.exec(line)
    if (head !== null) {
      current = new Map()
      byTopic.set(head[1] as string, current)
      continue
    }
    const entry = /^\s+([\w.]+)=(\S*)[\s,]+sensitive=/.exec(line)
    if (entry !== null) current?.set(entry[1] as string, entry[2] as string)
  }
  return byTopic
}

/** Groups with a committed offset per topic, as kafka-consumer-groups --describe --all-groups prints them. */
function parseGroupCommand(stdout: string): Map<string, Set<string>> {
  const byTopic = new Map<string, Set<string>>()
  for (const line of stdout.split('\n')) {
    const row = /^(\S+)\s+(\S+)\s+(\d+)\s+(\d+)\s+/.exec(line)
    if (row === null) continue
    const set = byTopic.get(row[2] as string) ?? new Set<string>()
    set.add(row[1] as string)
    byTopic.set(row[2] as string, set)
  }
  return byTopic
}

describe('squeeze audit: a cluster of thirty topics, read-only, by a user with Read and Describe', () => {
  it("reports every topic's codec mix, replication factor, retention, cleanup policy and groups as Kafka's tools do; one unreadable topic does not stop the others", async () => {
    const json = join(dir, 'audit.json')
    const markdown = join(dir, 'audit.md')
    const chart = join(dir, 'audit.svg')
    const { args, env } = auditArgs([
      '--json',
      json,
      '--markdown',
      markdown,
      '--chart',
      chart,
      '--price-storage-gib-month',
      '0.08',
      '--price-transfer-gib',
      '0.02',
      '--price-core-hour',
      '0.04',
      '--client',
      'java,filebeat,librdkafka'
    ])
    const before = new Set(await admin.listTopics())
    const audit = await runSqueeze(args, { env, timeoutMs: 600_000 })
    assert.equal(audit.code, 5, `a partial report (one topic not readable) exits 5:\n${audit.stdout}\n${audit.stderr}`)
    assert.deepEqual(new Set(await admin.listTopics()), before, 'the audit created no topic')
    process.stdout.write(`# ${audit.stdout.split('\n').join('\n# ')}\n`)
    for (const line of audit.stdout.split('\n')) assert.ok(line.length <= 100, `fits 100 columns: ${line}`)

    const progress = audit.stderr
      .split('\n')
      .filter((l) => l.includes('"progress"'))
      .map(
        (l) =>
          (JSON.parse(l) as { progress: { phase: string; done: number; total: number; bytesRead: number } }).progress
      )
    const last = progress.at(-1)
    assert.deepEqual(
      last,
      { ...last, phase: 'audit', done: planned.length + 2, total: planned.length + 2 },
      'progress on stderr, as JSON log lines off a terminal'
    )
    assert.ok((last?.bytesRead ?? 0) > 0, 'with the record bytes read')
    const report = JSON.parse(readFileSync(json, 'utf8')) as AuditReport
    const schema = (file: string): object =>
      JSON.parse(readFileSync(fileURLToPath(new URL(`../../../schema/${file}`, import.meta.url)), 'utf8')) as object
    // The audit's applyAs is compare's, referred to in its schema.
    const validate = new Ajv({ allErrors: true, strict: true })
      .addSchema(schema('compare-report.schema.json'))
      .compile(schema('audit-report.schema.json'))
    assert.equal(validate(report), true, JSON.stringify(validate.errors))
    assert.equal(report.topics.length, planned.length + 2, 'every test topic, the forbidden and the empty one included')
    assert.equal(report.partial, true)
    const byTopic = new Map(report.topics.map((t) => [t.topic, t]))
    const row = (topic: string): AuditTopic => byTopic.get(topic) ?? assert.fail(`${topic} missing from the report`)

    const forbidden = row(name('forbidden'))
    assert.equal(forbidden.status, 'not-authorized')
    assert.match(forbidden.error ?? '', /missing Read on topic/)
    assert.match(audit.stdout, new RegExp(`${name('forbidden')}: missing Read on topic`))
    assert.equal(row(name('empty')).status, 'empty')
    assert.equal(row(name('tiny')).status, 'too-little-data')
    const statuses = report.topics.map((t) => t.status === 'audited')
    assert.deepEqual(
      statuses,
      [...statuses].sort((a, b) => Number(b) - Number(a)),
      'audited topics first: only they are ranked'
    )

    // Kafka's DumpLogSegments on every partition's segment: the sample (larger than any topic) read every batch.
    const files = planned.flatMap((p) =>
      [0, 1].map((partition) => join(broker.kafkaLogDir, `${p.topic}-${partition}`, '00000000000000000000.log'))
    )
    const dumped = parseDumpLogSegments(await java(KafkaMainClasses.DUMP_LOG_SEGMENTS, ['--files', files.join(',')]))
    for (const p of planned) {
      const t = row(p.topic)
      if (p.topic !== name('tiny')) assert.equal(t.status, 'audited', `${p.topic}: ${t.error}`)
      const inLog = new Map<string, number>()
      for (const b of dumped.filter((d) => d.file?.includes(`/${p.topic}-`) === true))
        inLog.set(b.codec, (inLog.get(b.codec) ?? 0) + 1)
      assert.deepEqual(
        new Map(t.current?.codecs.map((c) => [c.codec, c.batches])),
        inLog,
        `${p.topic}: codec mix, batches per codec as DumpLogSegments lists them`
      )
      for (const codec of p.codecs) assert.ok(inLog.has(codec), `${p.topic}: written with ${codec}`)
      assert.equal(t.facts?.groups.length, p.groups, `${p.topic}: groups`)
      assert.ok(t.current !== null && t.current.meanRecordsPerBatch > 0)
    }
    assert.equal(row(name('compacted')).compacted, true)
    assert.match(
      audit.stdout,
      new RegExp(`${name('compacted')}: compacted: the figures apply to what compaction keeps`)
    )
    assert.equal(row(name('broker-gzip')).brokerRecompresses, true)
    assert.equal(row(name('broker-gzip')).facts?.compressionTypeSource, 'topic')
    assert.match(audit.stdout, /the broker recompresses every batch/)
    assert.ok(report.totals.money !== null && report.totals.money.net !== null, 'priced totals')

    // Kafka's own tools, on the super user's listener, say the same.
    const configs = parseConfigCommand(
      await java(KafkaMainClasses.CONFIG_COMMAND, [
        '--bootstrap-server',
        broker.bootstrap,
        '--describe',
        '--entity-type',
        'topics'
      ])
    )
    const groups = parseGroupCommand(
      await java(KafkaMainClasses.CONSUMER_GROUP_COMMAND, [
        '--bootstrap-server',
        broker.bootstrap,
        '--describe',
        '--all-groups'
      ])
    )
    const described = await java(KafkaMainClasses.TOPIC_COMMAND, [
      '--bootstrap-server',
      broker.bootstrap,
      '--describe',
      '--topic',
      `${run}-.*`
    ])
    for (const t of report.topics.filter((x) => x.facts !== null)) {
      const dynamic = configs.get(t.topic) ?? new Map<string, string>()
      if (dynamic.has('retention.ms'))
        assert.equal(String(t.facts?.retentionMs), dynamic.get('retention.ms'), `${t.topic}: retention.ms`)
      if (dynamic.has('retention.bytes'))
        assert.equal(String(t.facts?.retentionBytes), dynamic.get('retention.bytes'), `${t.topic}: retention.bytes`)
      assert.equal(t.facts?.cleanupPolicy, dynamic.get('cleanup.policy') ?? 'delete', `${t.topic}: cleanup.policy`)
      if (dynamic.has('compression.type')) assert.equal(t.facts?.compressionType, dynamic.get('compression.type'))
      const rf = new RegExp(
        `Topic: ${t.topic.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s.*ReplicationFactor: (\\d+)`
      ).exec(described)
      assert.equal(String(t.facts?.replicationFactor), rf?.[1], `${t.topic}: replication factor`)
      assert.equal(
        t.facts?.groups.length,
        groups.get(t.topic)?.size ?? 0,
        `${t.topic}: groups, as kafka-consumer-groups lists them`
      )
    }
    assert.equal(row(name('retained')).facts?.retentionMs, 3_600_000)
    assert.equal(row(name('retained')).facts?.retentionBytes, 1_048_576)
    assert.match(readFileSync(markdown, 'utf8'), /^# squeeze audit of /)
    assert.match(readFileSync(chart, 'utf8'), /^<svg /)
    assertClientSettings(report, audit.stdout, readFileSync(markdown, 'utf8'))
  })

  it("projects stored bytes per record within 2% of compare's copy mode, on three topics", async (t) => {
    const json = join(dir, 'three.json')
    const topics = [name('squeeze-00'), name('squeeze-01'), name('squeeze-04')]
    const { args, env } = auditArgs([
      '--json',
      json,
      '--quiet',
      '--exclude',
      `${run}-squeeze-0[235-9]`,
      '--replication-factor',
      '3'
    ])
    args.splice(args.indexOf('--topics') + 1, 1, `${run}-squeeze-0.`)
    const audit = await runSqueeze(args, { env, timeoutMs: 300_000 })
    assert.equal(audit.code, 0, audit.stderr)
    const report = JSON.parse(readFileSync(json, 'utf8')) as AuditReport
    assert.deepEqual(
      report.topics.map((x) => x.topic).sort(),
      topics,
      '--topics and --exclude, each matched against the whole name'
    )
    assert.equal(audit.stderr.includes('"progress"'), false, '--quiet')
    assert.equal(report.settings.replicationFactorOverride, 3)
    assert.ok(
      report.topics.every((x) => x.facts?.replicationFactor === 1),
      'the override changes the figures, not the facts read from the cluster'
    )
    for (const topic of topics) {
      const targets = parseTargets(TARGETS, topic)
      t.after(() => admin.deleteTopics({ topics: targets.map((x) => x.topic) }).catch(() => undefined))
      const copied = (
        await runCompare({
          connection,
          sourceTopic: topic,
          sourceDescription: { kind: 'topic', description: topic },
          targets,
          format: null,
          rateEvidence: { kind: 'topic', lookbackMs: 3_600_000 },
          producer: { ...DEFAULT_PRODUCER_CONFIG, ...COPIER_PRODUCER_DEFAULTS, ...BATCHING },
          keepTopics: false,
          consumers: 0,
          version: 'test',
          log
        })
      ).report
      const audited = report.topics.find((x) => x.topic === topic)
      assert.equal(audited?.status, 'audited', audited?.error ?? '')
      for (const target of copied.targets) {
        const projected = audited?.targets.find((x) => x.target === target.target)
        assert.ok(projected !== undefined, `${topic} ${target.target}`)
        const off = Math.abs(projected.ratio - target.ratio) / target.ratio
        assert.ok(
          off <= 0.02,
          `${topic} ${target.target}: projected ratio ${projected.ratio}, the copy stored ${target.ratio} (${(off * 100).toFixed(2)}% apart)`
        )
      }
    }
  })
})
