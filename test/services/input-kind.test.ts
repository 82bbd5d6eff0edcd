import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { gzipSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'
import { corpusLines, corpusPath } from '../helpers/corpus.js'
import { useTestKafka } from '../helpers/kafka.js'
import { runSqueeze } from '../helpers/squeeze-cli.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))
const kafka = useTestKafka()

describe('the kind of a file or stdin, given or detected', () => {
  it('bench --file of syslog lines as --kind http: exit 1 naming syslog, no table', async () => {
    const result = await runSqueeze([
      'bench',
      '--file',
      corpusPath('syslog_mtail_sftp_chroot.log'),
      '--kind',
      'http',
      '--codecs',
      'lz4:1'
    ])
    assert.equal(result.code, 1, result.stderr)
    assert.match(result.stderr, /0 of the first \d+ lines parse as http \(combined log format\); they look like syslog/)
    assert.equal(result.stdout, '')
  })

  it('bench --file without --kind detects syslog and says so', async () => {
    const result = await runSqueeze([
      'bench',
      '--file',
      corpusPath('syslog_mtail_sftp_chroot.log'),
      '--codecs',
      'lz4:1',
      '--runs',
      '1'
    ])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stderr, /--kind auto: .* reads as syslog/)
    assert.match(result.stdout, /\(syslog, \d+ lines\)/)
  })

  it('produce --source stdin without --kind reads nginx error lines as nginx-error', async (t) => {
    const topic = await kafka.createTopic(t)
    const child = spawn(
      process.execPath,
      [CLI, 'produce', '--brokers', kafka.broker.brokers.join(','), '--topic', topic, '--source', 'stdin'],
      { env: { ...process.env, KAFKA_BROKERS: '' } }
    )
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const lines = corpusLines('nginx_error_chemfh_2023.log').slice(0, 300)
    child.stdin.end(`${lines.join('\n')}\n`)
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    assert.equal(code, 0, stderr)
    assert.match(stderr, /--kind auto: stdin reads as nginx-error/)
    assert.match(stdout, new RegExp(`produced ${lines.length} records`))
  })

  it('produce --source stdin of compressed bytes (cat, not zcat) is one line saying so, with or without --kind', async (t) => {
    const topic = await kafka.createTopic(t)
    for (const kind of [[], ['--kind', 'nginx-error']]) {
      const child = spawn(
        process.execPath,
        [CLI, 'produce', '--brokers', kafka.broker.brokers.join(','), '--topic', topic, '--source', 'stdin', ...kind],
        { env: { ...process.env, KAFKA_BROKERS: '' } }
      )
      let stderr = ''
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
      child.stdout.resume()
      child.stdin.on('error', () => undefined)
      child.stdin.end(gzipSync(`${corpusLines('nginx_error_chemfh_2023.log').slice(0, 300).join('\n')}\n`))
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
      assert.equal(code, 1, stderr)
      // JSON log lines aside (with --kind, the start is logged): the one line a person reads.
      const human = stderr
        .trimEnd()
        .split('\n')
        .filter((l) => !l.startsWith('{'))
      assert.deepEqual(human, [
        'squeeze: stdin is gzip-compressed, not text lines: pipe it through zcat (zcat FILE | squeeze produce --source stdin ...) [SQUEEZE_ERR_SOURCE]'
      ])
    }
  })
})
