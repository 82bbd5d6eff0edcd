import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'
import { createGenerator } from '../../lib/generators/index.js'
import { kindLines } from '../helpers/corpus.js'
import { useTestKafka } from '../helpers/kafka.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))

function squeeze(
  args: string[],
  env: NodeJS.ProcessEnv = {}
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, KAFKA_BROKERS: '', ...env }, timeout: 90_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1
        resolve({ code, stdout, stderr })
      }
    )
  })
}

function oneLine(text: string): string {
  const lines = text.trim().split('\n')
  assert.equal(lines.length, 1, `expected one line on stderr, got:\n${text}`)
  return lines[0] as string
}

describe('squeeze CLI without a broker', () => {
  it("every command's --help into a reader that has gone (`| head -1`) exits 0 with nothing on stderr", async () => {
    for (const command of ['produce', 'consume', 'copy', 'compare', 'audit', 'bench']) {
      const child = spawn(process.execPath, [CLI, command, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] })
      child.stdout.destroy()
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)))
      assert.equal(code, 0, `${command}: ${stderr}`)
      assert.equal(stderr, '', command)
    }
  })

  it('--help lists the commands and exits 0', async () => {
    const result = await squeeze(['--help'])
    assert.equal(result.code, 0)
    assert.match(result.stdout, /produce/)
    assert.match(result.stdout, /consume/)
    const produceHelp = await squeeze(['produce', '--help'])
    assert.equal(produceHelp.code, 0)
    assert.match(produceHelp.stdout, /linger\.ms/)
  })

  it('--version, -V and version print the version of package.json and the Node running it, and exit 0', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string
    }
    for (const flag of ['--version', '-V', 'version']) {
      const result = await squeeze([flag])
      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stdout, `squeeze ${version} (Node ${process.version})\n`)
    }
  })

  it('every --help fits 100 columns where stdout is not a terminal (a pipe, a CI log)', async () => {
    for (const command of [[], ['produce'], ['consume'], ['copy'], ['compare'], ['audit'], ['bench']]) {
      const help = await squeeze([...command, '--help'])
      assert.equal(help.code, 0, help.stderr)
      const long = help.stdout.split('\n').filter((line) => line.length > 100)
      assert.deepEqual(long, [], `squeeze ${command.join(' ')} --help`)
    }
  })

  it("keeps V8's compiled code in the user's cache directory for the next run, and runs without it where nothing can be written", async () => {
    const home = mkdtempSync(join(tmpdir(), 'squeeze-cli-cache-'))
    const env = { XDG_CACHE_HOME: home, NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined }
    const first = await squeeze(['produce', '--help'], env)
    assert.equal(first.code, 0)
    const cached = readdirSync(join(home, 'squeeze', 'compile-cache'), { recursive: true, withFileTypes: true }).filter(
      (e) => e.isFile()
    )
    assert.ok(cached.length > 0, 'no compiled module in the cache directory')
    // A read-only filesystem (the image runs with one): every place the cache could go is under a plain file.
    const file = join(home, 'not-a-directory')
    writeFileSync(file, '')
    const readOnly = await squeeze(['produce', '--help'], { ...env, XDG_CACHE_HOME: file, HOME: file, TMPDIR: file })
    assert.equal(readOnly.code, 0)
    assert.equal(readOnly.stderr, '')
    assert.match(readOnly.stdout, /linger\.ms/)
  })

  it("produce loads only what a run needs: not undici, prom-client's index with @opentelemetry/api, kafkajs's index, the generators or a codec's library before it compresses", async () => {
    // Every module file loaded, and Node's internal ones, written to stderr at exit.
    const hook = `import { registerHooks } from 'node:module'
const files = []
registerHooks({ load(url, context, next) { files.push(url); return next(url, context) } })
process.on('exit', () => process.stderr.write(JSON.stringify([...files, ...process.moduleLoadList])))`
    const result = await squeeze(['produce', '--help'], {
      NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(hook)}`
    })
    assert.equal(result.code, 0)
    const loaded = JSON.parse(result.stderr) as string[]
    assert.ok(
      loaded.some((m) => m.includes('/kafkajs/src/cluster/')),
      'the hook saw no module at all'
    )
    for (const unwanted of [
      'internal/deps/undici/undici',
      '/@opentelemetry/api/',
      '/prom-client/index.js',
      '/kafkajs/index.js',
      '/lib/generators/',
      '/zstd-napi/',
      '/snappy/',
      'squeeze-lz4'
    ]) {
      assert.ok(!loaded.some((m) => m.includes(unwanted)), `produce loaded ${unwanted}`)
    }
  })

  it('an unknown codec is a one-line error listing the valid codecs, exit 2', async () => {
    const result = await squeeze(['produce', '--topic', 't', '--brokers', '127.0.0.1:9', '--codec', 'brotli'])
    assert.equal(result.code, 2)
    assert.match(oneLine(result.stderr), /unknown codec "brotli": use one of none, gzip, snappy, lz4, zstd/)
  })

  it('the one-shot commands refuse the services-only flags they would never serve, exit 2', async () => {
    for (const command of ['compare', 'audit', 'bench']) {
      const result = await squeeze([command, '--brokers', '127.0.0.1:9', '--metrics-port', '9464'])
      assert.equal(result.code, 2, `${command}: ${result.stderr}`)
      assert.match(oneLine(result.stderr), /metrics-port/, command)
      const help = await squeeze([command, '--help'])
      assert.doesNotMatch(help.stdout, /--metrics-port|--wait-for-brokers-s/, `${command} --help`)
    }
  })

  it('a level out of range names the valid range, exit 2', async () => {
    const result = await squeeze(['produce', '--topic', 't', '--brokers', '127.0.0.1:9', '--codec', 'zstd:30'])
    assert.equal(result.code, 2)
    assert.match(oneLine(result.stderr), /invalid zstd level 30: compression\.zstd\.level accepts -131072\.\.22/)
    const gzip = await squeeze([
      'produce',
      '--topic',
      't',
      '--brokers',
      '127.0.0.1:9',
      '-X',
      'compression.type=gzip',
      '-X',
      'compression.gzip.level=12'
    ])
    assert.equal(gzip.code, 2)
    assert.match(oneLine(gzip.stderr), /compression\.gzip\.level/)
  })

  it("lz4 takes Kafka's levels 1..17: lz4:0 and compression.lz4.level=18 are one-line errors naming that range, exit 2", async () => {
    const zero = await squeeze(['produce', '--topic', 't', '--brokers', '127.0.0.1:9', '--codec', 'lz4:0'])
    assert.equal(zero.code, 2)
    assert.match(oneLine(zero.stderr), /invalid lz4 level 0: compression\.lz4\.level accepts 1\.\.17 \(default 1\)/)
    const eighteen = await squeeze([
      'produce',
      '--topic',
      't',
      '--brokers',
      '127.0.0.1:9',
      '-X',
      'compression.type=lz4',
      '-X',
      'compression.lz4.level=18'
    ])
    assert.equal(eighteen.code, 2)
    assert.match(oneLine(eighteen.stderr), /invalid lz4 level 18: compression\.lz4\.level accepts 1\.\.17/)
  })

  it('reports every bad setting at once and rejects unknown ones', async () => {
    const result = await squeeze([
      'produce',
      '--topic',
      't',
      '--brokers',
      '127.0.0.1:9',
      '-X',
      'linger.ms=abc',
      '-X',
      'bogus.setting=1'
    ])
    assert.equal(result.code, 2)
    const line = oneLine(result.stderr)
    assert.match(line, /linger\.ms/)
    assert.match(line, /unknown setting bogus\.setting/)
  })

  it('an unreachable broker fails fast with a clear message, exit 1', async () => {
    const started = Date.now()
    const result = await squeeze(['produce', '--topic', 't', '--brokers', '127.0.0.1:9', '--records', '10'])
    assert.equal(result.code, 1)
    assert.match(result.stderr, /squeeze: cannot reach any Kafka broker/)
    assert.ok(Date.now() - started < 60_000)
  })
})

describe('squeeze CLI against a broker', () => {
  const kafka = useTestKafka()

  it('unparsable access-log lines are counted and skipped, or sent raw, never fatal', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-cli-'))
    const good =
      '83.149.9.216 - - [17/May/2015:10:05:03 +0000] "GET /images/kibana-search.png HTTP/1.1" 200 203023 "http://semicomplete.com/" "Mozilla/5.0"'
    const file = join(dir, 'access.log')
    writeFileSync(file, [good, 'garbage line', good, '\u0000\u0001 binary junk', good].join('\n') + '\n')
    const brokers = kafka.broker.brokers.join(',')
    const skipTopic = await kafka.createTopic(t)
    const skip = await squeeze([
      'produce',
      '--brokers',
      brokers,
      '--topic',
      skipTopic,
      '--source',
      'file',
      '--file',
      file,
      '--kind',
      'http',
      '--log-level',
      'silent'
    ])
    assert.equal(skip.code, 0, skip.stderr)
    assert.match(skip.stdout, /produced 3 records/)
    assert.match(skip.stdout, /lines not parsed: 2 \(skip\)/)
    const rawTopic = await kafka.createTopic(t)
    const raw = await squeeze([
      'produce',
      '--brokers',
      brokers,
      '--topic',
      rawTopic,
      '--source',
      'file',
      '--file',
      file,
      '--on-parse-error',
      'raw',
      '--log-level',
      'silent'
    ])
    assert.equal(raw.code, 0, raw.stderr)
    assert.match(raw.stdout, /produced 5 records/)

    // The consumer decodes the 3 Cap'n Proto records and counts the 2 raw lines as corrupt, and goes on.
    const consumed = await squeeze([
      'consume',
      '--brokers',
      brokers,
      '--topic',
      rawTopic,
      '--format',
      'http',
      '--log-level',
      'silent',
      '--json',
      join(dir, 'out.json')
    ])
    assert.equal(consumed.code, 0, consumed.stderr)
    const { readFileSync } = await import('node:fs')
    const [measurement] = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8')) as Array<{
      records: number
      corruptRecords: number
      diskBytes: number
    }>
    assert.equal(measurement?.records, 5)
    assert.equal(measurement?.corruptRecords, 2)
    assert.ok((measurement?.diskBytes ?? 0) > 0)
  })

  it('consume without --format reads topics of JSON lines and of HTTP records each as its kind, none counted corrupt', async (t) => {
    const journald = await kafka.createTopic(t)
    const http = await kafka.createTopic(t)
    const producer = await kafka.startProducer({ codec: { codec: 'lz4', level: 1 } })
    // The journald fixture's lines as another producer writes them: the JSON text, one line per record.
    for (const line of kindLines('journald').slice(0, 300))
      await producer.send({ topic: journald, key: null, value: Buffer.from(line) })
    const generator = createGenerator('http', { seed: 5 })
    for (let i = 0; i < 300; i++) await producer.send({ topic: http, key: null, value: generator.next().value })
    await producer.flush()
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-cli-'))
    const result = await squeeze([
      'consume',
      '--brokers',
      kafka.broker.brokers.join(','),
      '--topic',
      `${journald},${http}`,
      '--json',
      join(dir, 'm.json')
    ])
    assert.equal(result.code, 0, result.stderr)
    const { readFileSync } = await import('node:fs')
    const measured = JSON.parse(readFileSync(join(dir, 'm.json'), 'utf8')) as Array<{
      topic: string
      format: string
      records: number
      corruptRecords: number
    }>
    assert.deepEqual(
      measured.map((m) => [m.topic, m.format, m.records, m.corruptRecords]),
      [
        [journald, 'journald', 300, 0],
        [http, 'http', 300, 0]
      ]
    )
    assert.match(result.stdout, /read as/)
    assert.match(result.stderr, /--format auto: .* reads as journald/)
  })

  it("corrupt Cap'n Proto records in a topic are counted with their offsets, never a crash", async (t) => {
    const topic = await kafka.createTopic(t)
    const producer = await kafka.startProducer({ codec: { codec: 'zstd', level: 3 } })
    const generator = createGenerator('http', { seed: 3 })
    for (let i = 0; i < 200; i++) {
      const value = generator.next().value
      // Every 10th record: a truncated or bit-flipped message.
      const bad =
        i % 10 === 0
          ? i % 20 === 0
            ? value.subarray(0, 9)
            : Buffer.from(value.map((b, j) => (j === 12 ? b ^ 0xff : b)))
          : value
      await producer.send({ topic, key: null, value: bad })
    }
    await producer.flush()
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-cli-'))
    const deadLetters = await kafka.createTopic(t)
    const result = await squeeze([
      'consume',
      '--brokers',
      kafka.broker.brokers.join(','),
      '--topic',
      topic,
      '--json',
      join(dir, 'm.json'),
      '--dead-letter-topic',
      deadLetters
    ])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /zstd/)
    const { readFileSync } = await import('node:fs')
    const [m] = JSON.parse(readFileSync(join(dir, 'm.json'), 'utf8')) as Array<{
      records: number
      corruptRecords: number
    }>
    assert.equal(m?.records, 200)
    assert.ok(
      (m?.corruptRecords ?? 0) >= 10,
      `the 10 truncated messages at least are counted (got ${m?.corruptRecords})`
    )
    assert.match(result.stderr, /"offset":0,.*record does not decode/)
    // Every poison record went to the dead-letter topic, unchanged, with the error and its origin in headers.
    const dead = (await kafka.readAll([deadLetters])).flatMap(({ batch }) => batch.records)
    assert.equal(dead.length, m?.corruptRecords)
    const header = (name: string) => dead[0]?.headers.find((h) => h.key === name)?.value?.toString()
    assert.equal(header('squeeze.error.code'), 'SQUEEZE_ERR_DECODE_RECORD')
    assert.equal(header('squeeze.source.topic'), topic)
    assert.equal(header('squeeze.source.offset'), '0')
    assert.ok((header('squeeze.error') ?? '').length > 0)
  })

  it('a consumer restarted with --group resumes from its committed offsets', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 2 })
    const producer = await kafka.startProducer({ codec: { codec: 'zstd', level: 1 } })
    const send = async (from: number, to: number) => {
      for (let i = from; i < to; i++)
        await producer.send({ topic, key: Buffer.from(`k${i % 7}`), value: Buffer.from(`v${i}`) })
      await producer.flush()
    }
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-group-'))
    const { readFileSync } = await import('node:fs')
    const consume = async (name: string) => {
      const result = await squeeze([
        'consume',
        '--brokers',
        kafka.broker.brokers.join(','),
        '--topic',
        topic,
        '--format',
        'none',
        '--group',
        `g-${topic}`,
        '--json',
        join(dir, name),
        '--log-level',
        'silent'
      ])
      assert.equal(result.code, 0, result.stderr)
      return (JSON.parse(readFileSync(join(dir, name), 'utf8')) as Array<{ records: number }>)[0]?.records
    }
    await send(0, 100)
    assert.equal(await consume('first.json'), 100)
    await send(100, 150)
    assert.equal(await consume('second.json'), 50, 'the restarted consumer reads only what came after its commit')
    assert.equal(await consume('third.json'), 0)
  })

  it('consuming a topic that does not exist is one clear error, exit 1', async () => {
    const result = await squeeze([
      'consume',
      '--brokers',
      kafka.broker.brokers.join(','),
      '--topic',
      'no-such-topic',
      '--log-level',
      'silent'
    ])
    assert.equal(result.code, 1)
    assert.match(oneLine(result.stderr), /topic no-such-topic not found/)
  })
})
