import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'
import { useTestKafka } from '../helpers/kafka.js'
import { runSqueeze } from '../helpers/squeeze-cli.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))
const kafka = useTestKafka()

function quote(arg: string): string {
  return `'${arg.replaceAll("'", "'\\''")}'`
}

/** Runs the CLI on a pseudo-terminal (util-linux `script`), stdout and stderr both on it; resolves with what it showed. */
function onTerminal(args: readonly string[]): Promise<{ code: number; screen: string }> {
  const command = [process.execPath, CLI, ...args].map(quote).join(' ')
  return new Promise((done) => {
    execFile(
      'script',
      ['-qec', command, '/dev/null'],
      { env: { ...process.env, KAFKA_BROKERS: '' }, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout) => {
        done({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, screen: stdout })
      }
    )
  })
}

describe('progress of a long run', () => {
  const args = (): string[] => [
    'compare',
    '--brokers',
    kafka.broker.brokers.join(','),
    '--source',
    'generate',
    '--records',
    '20000',
    '--targets',
    'none,zstd:3'
  ]

  it('compare on a terminal: a line redrawn in place through fill, copy and read back, gone before the report', async () => {
    const { code, screen } = await onTerminal(args())
    assert.equal(code, 0, screen)
    const redraws = screen.split('\r\u001b[2K').slice(1)
    for (const phase of [
      /^fill source {2}[\d,]+\/20,000 records/,
      /^copy {2}[\d,]+\/20,000 records/,
      /^read back .*\/2 targets/
    ]) {
      assert.ok(
        redraws.some((line) => phase.test(line)),
        `${phase} in ${JSON.stringify(redraws.slice(0, 20))}`
      )
    }
    assert.match(screen, /recommendation: /)
  })

  it('compare without a terminal: no progress on stdout; --quiet: none on stderr either', async () => {
    const plain = await runSqueeze(args())
    assert.equal(plain.code, 0, plain.stderr)
    assert.ok(!plain.stdout.includes('\u001b'), 'no escape sequence on stdout')
    assert.doesNotMatch(plain.stdout, /fill source|copy {2}\d/)
    const quiet = await runSqueeze([...args(), '--quiet', '--log-level', 'info'])
    assert.equal(quiet.code, 0, quiet.stderr)
    assert.doesNotMatch(quiet.stderr, /"progress"/)
  })
})
