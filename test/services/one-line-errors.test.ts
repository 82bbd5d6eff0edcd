import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { gzipSync } from 'node:zlib'
import { useTestKafka } from '../helpers/kafka.js'
import { runSqueeze } from '../helpers/squeeze-cli.js'

const kafka = useTestKafka()
// A port nothing listens on: connections are refused at once.
const NOWHERE = '127.0.0.1:1'

describe('what a command prints on stderr', () => {
  for (const [command, args] of [
    ['consume', ['--topic', 'x']],
    ['compare', ['--topic', 'x']],
    ['bench', ['--topic', 'x']]
  ] as const) {
    it(`${command} against an unreachable broker: squeeze's one line, none of kafkajs's, at the default and warn levels`, async () => {
      for (const level of [[], ['--log-level', 'warn']]) {
        const result = await runSqueeze([command, ...args, '--brokers', NOWHERE, ...level])
        assert.equal(result.code, 1, result.stderr)
        assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr)
        assert.match(
          result.stderr,
          /^squeeze: cannot reach any Kafka broker at 127\.0\.0\.1:1: .*\[SQUEEZE_ERR_BROKER_UNREACHABLE\]\n$/
        )
      }
    })
  }

  it('a --brokers address that answers in HTTP: one line saying it is not a Kafka listener, exit 1', async () => {
    const server = createServer((_req, res) => res.writeHead(404).end())
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const at = `127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      for (const command of ['produce', 'consume'] as const) {
        const result = await runSqueeze([command, '--topic', 'x', '--brokers', at])
        assert.equal(result.code, 1, result.stderr)
        // produce logs its start at info, as JSON: the lines a person reads are the others.
        const lines = result.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{'))
        assert.equal(lines.length, 1, result.stderr)
        assert.match(
          `${lines[0]}\n`,
          /^squeeze: 127\.0\.0\.1:\d+ answered in HTTP \("HTTP\/1\.1 \d+ .*"\): it is not a Kafka listener; check the port in --brokers \[SQUEEZE_ERR_NOT_KAFKA\]\n$/
        )
      }
    } finally {
      server.close()
    }
  })

  it('produce --source file of a path it cannot read: one line saying what to fix, exit 1, before connecting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-unreadable-'))
    // A rotated log, compressed: its bytes are no text lines, whatever --kind says.
    const gz = join(dir, 'app.log.2.gz')
    writeFileSync(gz, gzipSync('Dec  4 02:11:09 host app[1]: a line\n'))
    const compressed =
      /^squeeze: .*app\.log\.2\.gz is gzip-compressed, not text lines: decompress it first \(zcat .*\n$/
    for (const [file, kind, expected] of [
      [gz, [], compressed],
      [gz, ['--kind', 'syslog'], compressed],
      [dir, [], /^squeeze: .* is a directory: give a file, or a glob such as .*\/\*\.log \[SQUEEZE_ERR_SOURCE\]\n$/],
      [dir, ['--kind', 'syslog'], /is a directory: give a file, or a glob/],
      [join(dir, 'missing.log'), [], /^squeeze: .*missing\.log does not exist \[SQUEEZE_ERR_SOURCE\]\n$/],
      [join(dir, 'missing.log'), ['--kind', 'syslog'], /missing\.log does not exist/],
      [join(dir, '*.log'), ['--kind', 'syslog'], /no file matches .*\*\.log: check the path, or add --follow/],
      [join(dir, '*.log'), [], /--kind auto: no file matches .*\*\.log yet to read its kind from; give --kind/]
    ] as const) {
      const result = await runSqueeze([
        'produce',
        '--topic',
        'x',
        '--source',
        'file',
        '--file',
        file,
        ...kind,
        '--brokers',
        NOWHERE
      ])
      assert.equal(result.code, 1, result.stderr)
      assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr)
      assert.match(result.stderr, expected)
    }
    // The commands that read a file's records in memory say the same.
    for (const args of [
      ['bench', '--file', gz, '--runs', '1'],
      ['compare', '--source', 'file', '--file', gz, '--brokers', NOWHERE]
    ]) {
      const result = await runSqueeze(args)
      assert.equal(result.code, 1, result.stderr)
      assert.match(result.stderr, compressed)
    }
  })

  it("at debug, kafkajs's own lines are there, under squeeze's logger", async () => {
    const result = await runSqueeze(['consume', '--topic', 'x', '--brokers', NOWHERE, '--log-level', 'debug'])
    assert.equal(result.code, 1)
    assert.match(result.stderr, /"level":20,.*"kafkajs":\{"namespace":"(Connection|BrokerPool)"/)
  })

  it('consume (once, and in a group) prints no TimeoutNegativeWarning', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 2 })
    const produced = await runSqueeze([
      'produce',
      '--brokers',
      kafka.broker.brokers.join(','),
      '--topic',
      topic,
      '--records',
      '5000',
      '--log-level',
      'warn'
    ])
    assert.equal(produced.code, 0, produced.stderr)
    for (const group of [[], ['--group', `g-${topic}`]]) {
      const result = await runSqueeze(
        ['consume', '--brokers', kafka.broker.brokers.join(','), '--topic', topic, ...group],
        { env: { NODE_OPTIONS: '' } }
      )
      assert.equal(result.code, 0, result.stderr)
      assert.match(result.stdout, /5000/)
      assert.doesNotMatch(result.stderr, /TimeoutNegativeWarning|Warning:/)
    }
  })
})
