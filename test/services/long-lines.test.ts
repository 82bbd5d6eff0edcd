import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, it, type TestContext } from 'node:test'
import { useTestKafka } from '../helpers/kafka.js'
import { poll } from '../helpers/poll.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))
const LINE_BYTES = 50 * 1024 * 1024
const PIECE_BYTES = 1024 * 1024
/**
 * Peak RSS a producer may reach while it reads a 50 MiB line: the line held whole (as bytes, then as a string of
 * twice as many bytes) would pass it; its 1 MiB pieces in batches of buffer.memory (32 MiB) do not.
 */
const PEAK_RSS_LIMIT_BYTES = 256 * 1024 * 1024

const kafka = useTestKafka()

/** A file of one 50 MiB line with no newline, then nothing: written in 1 MiB writes. */
async function writeLongLine(path: string): Promise<void> {
  const out = createWriteStream(path)
  const piece = Buffer.alloc(PIECE_BYTES, 0x78)
  for (let written = 0; written < LINE_BYTES; written += PIECE_BYTES) {
    if (!out.write(piece)) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())))
}

/** The process's peak RSS so far (VmHWM), or undefined once it is gone. */
function peakRss(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match === null ? undefined : Number(match[1]) * 1024
  } catch {
    return undefined
  }
}

interface Run {
  code: number | null
  stdout: string
  peak: number
}

/** Runs produce with `args`, sampling its peak RSS; `stdinFile` is piped to it, `stop` says when to SIGTERM it. */
async function produce(
  args: readonly string[],
  options: { stdinFile?: string; stop?: () => Promise<void> }
): Promise<Run> {
  const child = spawn(
    process.execPath,
    [
      CLI,
      'produce',
      '--brokers',
      kafka.broker.brokers.join(','),
      '--kind',
      'syslog',
      '--on-parse-error',
      'raw',
      '--log-level',
      'warn',
      '-X',
      'max.request.size=4194304',
      ...args
    ],
    { env: { ...process.env, KAFKA_BROKERS: '' }, stdio: ['pipe', 'pipe', 'pipe'] }
  )
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  let peak = 0
  const sample = (): void => {
    peak = Math.max(peak, peakRss(child.pid ?? -1) ?? 0)
  }
  const sampler = setInterval(sample, 20)
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  if (options.stdinFile !== undefined) {
    createReadStream(options.stdinFile).pipe(child.stdin)
  } else {
    child.stdin.end()
  }
  if (options.stop !== undefined) {
    await options.stop()
    sample()
    child.kill('SIGTERM')
  }
  const code = await exited
  clearInterval(sampler)
  assert.ok(peak > 0, `the child's RSS was sampled; stderr: ${stderr}`)
  return { code, stdout: stdout + stderr, peak }
}

async function pieces(topic: string): Promise<number[]> {
  return (await kafka.readAll([topic])).flatMap(({ batch }) => batch.records.map((r) => r.value?.length ?? 0))
}

/** `held`: pieces a followed file keeps, the line not being finished (no newline yet). */
function assertSplit(lengths: number[], held = 0): void {
  assert.equal(lengths.length, LINE_BYTES / PIECE_BYTES - held, 'one record per 1 MiB piece')
  assert.ok(lengths.every((n) => n === PIECE_BYTES))
}

describe('--max-line-bytes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-long-line-'))
  const path = join(dir, 'one-line.log')
  const written = writeLongLine(path)

  /** The run ended (or was stopped) cleanly, counted one split line, and stayed under the RSS bound. */
  function assertRun(t: TestContext, run: Run): void {
    assert.equal(run.code, 0, run.stdout)
    assert.match(run.stdout, /lines split: 1,/)
    t.diagnostic(`peak RSS ${Math.round(run.peak / 1048576)} MiB`)
    assert.ok(run.peak < PEAK_RSS_LIMIT_BYTES, `peak RSS ${run.peak}`)
  }

  it('a 50 MiB line with no newline in a file read once is split into 1 MiB records, counted, at bounded RSS', async (t) => {
    await written
    const topic = await kafka.createTopic(t)
    assertRun(t, await produce(['--topic', topic, '--source', 'file', '--file', path], {}))
    assertSplit(await pieces(topic))
  })

  it('the same line on stdin', async (t) => {
    await written
    const topic = await kafka.createTopic(t)
    assertRun(t, await produce(['--topic', topic, '--source', 'stdin'], { stdinFile: path }))
    assertSplit(await pieces(topic))
  })

  it('the same line in a followed file, its last piece held until the line ends', async (t) => {
    await written
    const topic = await kafka.createTopic(t)
    const args = ['--topic', topic, '--source', 'file', '--file', path, '--follow', '--state-dir', join(dir, 'state')]
    const held = LINE_BYTES / PIECE_BYTES - 1
    const stop = async (): Promise<void> => {
      await poll(
        `${held} pieces in the topic`,
        () => pieces(topic),
        (p) => p.length >= held,
        120_000,
        { intervalMs: 1000 }
      )
    }
    assertRun(t, await produce(args, { stop }))
    assertSplit(await pieces(topic), 1)
    rmSync(dir, { recursive: true, force: true })
  })
})
