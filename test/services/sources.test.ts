import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { appendFileSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'
import { readFileLines } from '../../lib/sources/file-source.js'
import { useTestKafka } from '../helpers/kafka.js'
import { scrapeCounter } from '../helpers/metrics.js'
import { freePort } from '../helpers/ports.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))

const kafka = useTestKafka()

async function values(topic: string): Promise<string[]> {
  return (await kafka.readAll([topic])).flatMap(({ batch }) => batch.records.map((r) => r.value?.toString() ?? ''))
}

describe('sources', () => {
  it('--follow reads a growing file like tail -F, across rotation and truncation', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-follow-'))
    const path = join(dir, 'app.log')
    writeFileSync(path, 'one\ntwo\n')
    const abort = new AbortController()
    const lines: string[] = []
    const reading = (async () => {
      for await (const item of readFileLines(path, { follow: true, pollMs: 20, signal: abort.signal })) {
        if (item.kind === 'line') lines.push(item.line)
      }
    })()
    const waitFor = async (n: number) => {
      for (let i = 0; i < 200 && lines.length < n; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await waitFor(2)
    appendFileSync(path, 'three\nfour')
    await waitFor(3)
    appendFileSync(path, ' and more\n')
    await waitFor(4)
    renameSync(path, `${path}.1`) // rotated away...
    writeFileSync(path, 'five\n') // ...and a new file takes its name
    await waitFor(5)
    writeFileSync(path, 'six\n') // truncated and rewritten
    await waitFor(6)
    abort.abort()
    await reading
    assert.deepEqual(lines, ['one', 'two', 'three', 'four and more', 'five', 'six'])
  })

  it('--source stdin produces one record per line and stops when stdin closes', async (t) => {
    const topic = await kafka.createTopic(t)
    const child = spawn(
      process.execPath,
      [
        CLI,
        'produce',
        '--brokers',
        kafka.broker.brokers.join(','),
        '--topic',
        topic,
        '--source',
        'stdin',
        '--kind',
        'syslog',
        '--on-parse-error',
        'raw',
        '--log-level',
        'silent'
      ],
      { env: { ...process.env, KAFKA_BROKERS: '' } }
    )
    let stdout = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stdin.end('Dec  4 11:16:33 phone kernel: first\nnot syslog at all\nDec  4 11:16:34 phone kernel: third\n')
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    assert.equal(code, 0)
    assert.match(stdout, /produced 3 records/)
    assert.match(stdout, /lines not parsed: 1 \(raw\)/)
    assert.deepEqual(await values(topic), [
      'Dec  4 11:16:33 phone kernel: first',
      'not syslog at all',
      'Dec  4 11:16:34 phone kernel: third'
    ])
  })

  for (const [signal, what] of [
    ['SIGINT', 'Ctrl-C (SIGINT)'],
    ['SIGHUP', 'a closed terminal (SIGHUP)']
  ] as const)
    it(`${what} on a producer flushes every accepted record before it exits 0`, async (t) => {
      const topic = await kafka.createTopic(t)
      const metricsPort = await freePort()
      const child = spawn(
        process.execPath,
        [
          CLI,
          'produce',
          '--brokers',
          kafka.broker.brokers.join(','),
          '--topic',
          topic,
          '--kind',
          'nginx-error',
          '--records',
          '100000000',
          '--rate',
          '2000',
          '--log-level',
          'silent',
          '-X',
          'linger.ms=1000',
          '--metrics-port',
          String(metricsPort)
        ],
        { env: { ...process.env, KAFKA_BROKERS: '' } }
      )
      t.after(() => child.kill('SIGKILL'))
      let stdout = ''
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
      // Interrupt once the broker has acknowledged a first batch: with linger.ms=1000 the next one is still buffered.
      let acked = 0
      for (let i = 0; i < 600 && acked === 0 && child.exitCode === null; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        acked = (await scrapeCounter(metricsPort, 'squeeze_records_produced_total')) ?? 0
      }
      assert.ok(acked > 0, 'the producer had records acknowledged before the interrupt')
      child.kill(signal)
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
      assert.equal(code, 0)
      const produced = Number(/produced (\d+) records/.exec(stdout)?.[1] ?? -1)
      assert.ok(produced >= acked, stdout)
      assert.equal((await values(topic)).length, produced, 'every record it reported as produced is in the topic')
    })

  it('Ctrl-C on compare ends the copy and still prints a (partial) report', async () => {
    const child = spawn(
      process.execPath,
      [
        CLI,
        'compare',
        '--brokers',
        kafka.broker.brokers.join(','),
        '--source',
        'generate',
        '--kind',
        'http',
        '--records',
        '400000',
        '--targets',
        'none,zstd:1',
        '--log-level',
        'silent'
      ],
      { env: { ...process.env, KAFKA_BROKERS: '' } }
    )
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    // Interrupt once the copy has begun: a destination topic exists and holds records.
    for (let i = 0; i < 600; i++) {
      const topics = (await kafka.admin.listTopics()).filter((name) => /^squeeze-compare\..*\.none$/.test(name))
      const offsets =
        topics.length === 0 ? [] : await kafka.admin.fetchTopicOffsets(topics[0] as string).catch(() => [])
      if (offsets.some((o) => Number(o.high) > 0)) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    child.kill('SIGINT')
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    assert.equal(code, 0, stderr)
    assert.match(stdout, /^PARTIAL: /m)
    assert.match(stdout, /^none\s+\d+/m)
    assert.match(stdout, /^zstd:1\s+\d+/m)
  })
})
