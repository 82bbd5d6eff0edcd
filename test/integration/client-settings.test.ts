import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it, type TestContext } from 'node:test'
import type { ClientApply } from '../../lib/apply/apply-as.js'
import type { ClientName } from '../../lib/apply/client-limits.js'
import kafkajs from 'kafkajs'
import { KafkaMainClasses, runKafkaJavaTool } from '../../lib/embedded-broker/java-tools.js'
import type { CompareReportJson } from '../../lib/report/compare-json.js'
import { corpusLines, corpusPath } from '../helpers/corpus.js'
import { useTestKafka } from '../helpers/kafka.js'
import { runSqueeze } from '../helpers/squeeze-cli.js'

/**
 * The settings compare prints, pasted into the client they are for, make that client write what compare
 * projected: a topic written with the client's defaults, compare --client on it, a second topic written with
 * the emitted settings, compare on that one: its current row is the recommended codec, at the projected ratio.
 */
const kafka = useTestKafka()
const FIXTURE = 'access_apache_semicomplete_2015.log'
/**
 * The smallest stored size wins under a budget no target exceeds, and batches close on batch.size (the records
 * arrive faster than linger.ms), so the figures do not depend on how fast the machine is.
 */
const COMPARE_ARGS = ['--mode', 'projection', '--cpu-budget', '100000', '-X', 'batch.size=16384']
/** zstd:19 wins; librdkafka cannot set it and gets zstd:12, which compare adds. */
const WITH_ZSTD_19 = ['--targets', 'none,lz4,zstd:3,zstd:19']
const TO_ZSTD_6 = ['--targets', 'none,lz4,zstd:3,zstd:6']
/**
 * Batches close on batch.size, not on linger.ms, in both the projection and the Java producer: a linger.ms no
 * stall reaches. Java's batch.size bounds its estimate of the compressed batch; the emitted batch.size is the one
 * at which that estimator, simulated over the first topic's run, makes batches of the projection's size.
 */
const JAVA_ARGS = [...TO_ZSTD_6, '-X', 'batch.size=131072', '-X', 'linger.ms=60000']
let dir: string

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'squeeze-client-settings-'))
})
after(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

function brokers(): string {
  return kafka.broker.brokers.join(',')
}

async function compare(
  topic: string,
  client: ClientName,
  extra: readonly string[] = [],
  name = topic
): Promise<CompareReportJson> {
  const json = join(dir, `${name}.json`)
  const run = await runSqueeze([
    'compare',
    '--topic',
    topic,
    '--brokers',
    brokers(),
    ...COMPARE_ARGS,
    '--client',
    client,
    '--json',
    json,
    '--log-level',
    'error',
    ...extra
  ])
  assert.equal(run.code, 0, run.stderr)
  return JSON.parse(readFileSync(json, 'utf8')) as CompareReportJson
}

function clientRow(report: CompareReportJson, client: ClientName): ClientApply {
  const row = report.applyAs?.clients.find((c) => c.client === client)
  assert.ok(
    row?.settings != null && row.target !== null && row.ratio !== null,
    `an applyAs row with settings for ${client}`
  )
  return row
}

/** The second compare's current row against the first compare's projection for the client's row. */
function assertAsProjected(
  t: TestContext,
  second: CompareReportJson,
  projected: ClientApply,
  first: CompareReportJson
): void {
  const firstRow = first.targets.find((r) => r.target === projected.target)
  const batching =
    `records per batch: projected ${firstRow?.meanRecordsPerBatch.toFixed(1)}, stored ` +
    `${second.current?.row.meanRecordsPerBatch.toFixed(1)}`
  const current = second.current?.row
  assert.ok(current !== undefined, 'the second topic has a current row')
  const codec = (projected.target as string).split(':')[0]
  assert.equal(current.codec, codec, `the second topic stores ${codec} batches`)
  const off = Math.abs(current.ratio / (projected.ratio as number) - 1)
  t.diagnostic(
    `${projected.client} ${projected.target}: stored ${current.ratio.toFixed(3)}, projected ` +
      `${(projected.ratio as number).toFixed(3)}; ${batching}`
  )
  assert.ok(
    off <= 0.03,
    `stored ratio ${current.ratio.toFixed(3)} within 3% of the projected ` +
      `${(projected.ratio as number).toFixed(3)} (off by ${(100 * off).toFixed(1)}%; ${batching})`
  )
}

function run(command: string, args: readonly string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stderr })
    })
  })
}

describe('settings compare emits, pasted into the client, store what compare projected', () => {
  it('squeeze produce: the emitted command line, run as printed', async (t) => {
    const first = await kafka.createTopic(t, { partitions: 1 })
    const produce = ['--source', 'file', '--file', corpusPath(FIXTURE), '--kind', 'http', '--log-level', 'error']
    // At lz4 today, so zstd:6 is a change against what the topic stores (the settings follow the verdict).
    const today = await runSqueeze(['produce', '--brokers', brokers(), '--topic', first, '--codec', 'lz4', ...produce])
    assert.equal(today.code, 0, today.stderr)
    const report = await compare(first, 'squeeze', TO_ZSTD_6)
    const row = clientRow(report, 'squeeze')
    assert.equal(row.target, 'zstd:6')
    const second = await kafka.createTopic(t, { partitions: 1 })
    const printed = (row.settings?.text ?? '').trim().split(/\s+/)
    assert.deepEqual(printed.slice(0, 6), ['squeeze', 'produce', '--brokers', brokers(), '--topic', first])
    const written = await runSqueeze([
      'produce',
      '--brokers',
      brokers(),
      '--topic',
      second,
      ...printed.slice(6),
      ...produce
    ])
    assert.equal(written.code, 0, written.stderr)
    assertAsProjected(t, await compare(second, 'squeeze', TO_ZSTD_6), row, report)
  })

  it(
    'kcat (librdkafka): the emitted properties as kcat -F FILE; librdkafka cannot set zstd:19 and gets ' + 'zstd:12',
    async (t) => {
      const lines = join(dir, 'lines.log')
      writeFileSync(lines, `${corpusLines(FIXTURE).join('\n')}\n`)
      const first = await kafka.createTopic(t, { partitions: 1 })
      const defaults = await run('kcat', ['-b', brokers(), '-P', '-t', first, '-l', lines])
      assert.equal(defaults.code, 0, defaults.stderr)
      const report = await compare(first, 'librdkafka', WITH_ZSTD_19)
      assert.ok(
        report.targets.some((r) => r.target === 'zstd:12'),
        'compare added zstd:12 for librdkafka'
      )
      const row = clientRow(report, 'librdkafka')
      assert.equal(row.target, 'zstd:12')
      assert.equal(row.limited, true)
      assert.match(row.text, /^librdkafka cannot set zstd:19; zstd:12 stores \d+\.\d\dx of it$/)
      const props = join(dir, `${first}.properties`)
      writeFileSync(props, row.settings?.text ?? '')
      const second = await kafka.createTopic(t, { partitions: 1 })
      const written = await run('kcat', ['-F', props, '-P', '-t', second, '-l', lines])
      assert.equal(written.code, 0, written.stderr)
      assertAsProjected(t, await compare(second, 'librdkafka', WITH_ZSTD_19), row, report)
    }
  )

  it("Kafka's Java producer (ProducerPerformance): the emitted properties as --producer.config FILE", async (t) => {
    // The second topic is written with as many records as the first, the run the batch.size was simulated over.
    const payloads = join(dir, 'payloads.log')
    writeFileSync(payloads, corpusLines(FIXTURE).join('\n'))
    const perf = (topic: string, config: readonly string[]): Promise<{ code: number | null; stderr: string }> =>
      runKafkaJavaTool(
        KafkaMainClasses.PRODUCER_PERFORMANCE,
        ['--topic', topic, '--num-records', '200000', '--throughput', '-1', '--payload-file', payloads, ...config],
        { timeoutMs: 180_000 }
      )
    const first = await kafka.createTopic(t, { partitions: 1 })
    const defaults = await perf(first, ['--producer-props', `bootstrap.servers=${brokers()}`])
    assert.equal(defaults.code, 0, defaults.stderr)
    const report = await compare(first, 'java', JAVA_ARGS)
    const row = clientRow(report, 'java')
    assert.equal(row.target, 'zstd:6')
    assert.match(row.settings?.text ?? '', /^compression\.type=zstd\ncompression\.zstd\.level=6\n/m)
    const config = join(dir, `${first}.properties`)
    writeFileSync(config, row.settings?.text ?? '')
    const second = await kafka.createTopic(t, { partitions: 1 })
    const written = await perf(second, ['--producer.config', config])
    assert.equal(written.code, 0, written.stderr)
    const stored = await compare(second, 'java', JAVA_ARGS)
    const current = stored.current?.row
    assert.ok(current !== undefined && current.batches > 0)
    t.diagnostic(
      `java: batch.size ${/batch\.size=(\d+)/.exec(row.settings?.text ?? '')?.[1]}, ` +
        `mean batch ${Math.round(current.uncompressedBytes / current.batches)} bytes uncompressed`
    )
    assertAsProjected(t, stored, row, report)
  })
})

describe('compare --apply-topic-config', () => {
  /** A one-partition topic with `configs`, filled with the syslog fixture by squeeze's producer (`produce` flags). */
  async function syslogTopic(
    t: TestContext,
    configs: Record<string, string>,
    produce: readonly string[] = []
  ): Promise<string> {
    const topic = await kafka.createTopic(t, { partitions: 1, configs })
    const fixture = corpusPath('syslog_mtail_sftp_chroot.log')
    const file = ['--source', 'file', '--file', fixture, '--kind', 'syslog', '--log-level', 'error']
    const filled = await runSqueeze(['produce', '--brokers', brokers(), '--topic', topic, ...file, ...produce])
    assert.equal(filled.code, 0, filled.stderr)
    return topic
  }

  /** compare's projection of `topic` for squeeze, with the topic side set by codec (what --apply-topic-config sets). */
  function topicConfigCompare(topic: string, targets: string): string[] {
    return [
      'compare',
      '--topic',
      topic,
      '--brokers',
      brokers(),
      '--mode',
      'projection',
      '--targets',
      targets,
      '--client',
      'squeeze',
      '--topic-compression',
      'codec',
      '--log-level',
      'error'
    ]
  }

  async function topicConfigs(topic: string): Promise<Map<string, string>> {
    const { resources } = await kafka.admin.describeConfigs({
      resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topic }],
      includeSynonyms: false
    })
    return new Map((resources[0]?.configEntries ?? []).map((e) => [e.configName, e.configValue]))
  }

  it(
    'changes nothing without the flag; with it, a validated dry run, then only the named configs ' + 'change',
    async (t) => {
      const topic = await syslogTopic(t, { 'compression.type': 'lz4', 'retention.ms': '7200000' }, ['--codec', 'lz4'])
      const args = topicConfigCompare(topic, 'none,zstd:3')
      const printed = await runSqueeze(args)
      assert.equal(printed.code, 0, printed.stderr)
      // The command is printed over lines with shell continuations: joined as a shell joins them.
      assert.match(
        printed.stdout.replace(/ \\\n\s+/g, ' '),
        new RegExp(
          `kafka-configs\\.sh --bootstrap-server ${brokers()} --alter --entity-type topics --entity-name ${topic} ` +
            `--add-config compression\\.type=zstd,compression\\.zstd\\.level=3`
        )
      )
      assert.equal((await topicConfigs(topic)).get('compression.type'), 'lz4', 'printing the command changes nothing')
      const applied = await runSqueeze([...args, '--apply-topic-config'])
      assert.equal(applied.code, 0, applied.stderr)
      const lines = applied.stdout.split('\n')
      const dryRun = lines.findIndex(
        (l) =>
          l ===
          `dry run: the broker accepts compression.type=zstd,compression.zstd.level=3 on ${topic} ` +
            `(IncrementalAlterConfigs, validateOnly)`
      )
      const done = lines.findIndex((l) => l === `applied: compression.type=zstd,compression.zstd.level=3 on ${topic}`)
      assert.ok(dryRun !== -1 && done > dryRun, `a dry-run line, then the change:\n${applied.stdout.slice(-600)}`)
      const after = await topicConfigs(topic)
      assert.equal(after.get('compression.type'), 'zstd')
      assert.equal(after.get('compression.zstd.level'), '3')
      assert.equal(
        after.get('retention.ms'),
        '7200000',
        "IncrementalAlterConfigs leaves the topic's other configs alone"
      )
    }
  )

  it('changes nothing when the verdict is to keep what the topic stores, and says so', async (t) => {
    const topic = await syslogTopic(t, { 'compression.type': 'zstd' })
    const applied = await runSqueeze([...topicConfigCompare(topic, 'none,lz4,zstd:3'), '--apply-topic-config'])
    assert.equal(applied.code, 0, applied.stderr)
    assert.match(applied.stdout, /^per client: nothing to change; keep zstd, which no target beats by the margin/m)
    assert.doesNotMatch(applied.stdout, /kafka-configs\.sh/)
    assert.match(
      applied.stderr,
      /^squeeze: --apply-topic-config: the verdict is to keep zstd, which no target beats by the margin, so no topic config was changed$/m
    )
    assert.equal((await topicConfigs(topic)).get('compression.type'), 'zstd')
  })

  it('refuses --apply-topic-config without --topic, and an unknown --client, at start-up', async () => {
    const generated = await runSqueeze([
      'compare',
      '--brokers',
      brokers(),
      '--source',
      'generate',
      '--apply-topic-config'
    ])
    assert.equal(generated.code, 2)
    assert.match(generated.stderr, /--apply-topic-config needs --topic: it changes a topic/)
    const unknown = await runSqueeze(['compare', '--brokers', brokers(), '--source', 'generate', '--client', 'rdkafka'])
    assert.equal(unknown.code, 2)
    assert.match(unknown.stderr, /unknown --client rdkafka/)
  })
})
