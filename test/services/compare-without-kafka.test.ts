import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, describe, it } from 'node:test'
import { repoRoot } from '../helpers/repo-root.js'

/**
 * What the Dockerfile's runtime stage holds: dist/ without tests, package.json and the production modules
 * (`npm ci --omit=dev`, here linked from this checkout's node_modules as package-lock.json lists them), and no
 * kafka/ folder. testcontainers is a dev dependency, so it is absent too.
 */
function imageLayout(dir: string): string {
  const root = repoRoot()
  for (const part of ['lib', 'services']) cpSync(join(root, 'dist', part), join(dir, 'dist', part), { recursive: true })
  cpSync(join(root, 'package.json'), join(dir, 'package.json'))
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>
  }
  for (const [path, entry] of Object.entries(lock.packages)) {
    // Top-level packages only: a nested node_modules comes along inside its parent's folder.
    if (entry.dev === true || !/^node_modules\/(@[^/]+\/)?[^/@]+$/.test(path)) continue
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    symlinkSync(join(root, path), join(dir, path))
  }
  return dir
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { env: { ...process.env, ...env }, timeout: 180_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr })
    })
  })
}

describe('the container image layout (no kafka/, no dev dependencies)', () => {
  const dir = imageLayout(mkdtempSync(join(tmpdir(), 'squeeze-image-')))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('has no testcontainers, while the production modules load', () => {
    assert.equal(existsSync(join(dir, 'node_modules', 'testcontainers')), false)
    assert.equal(existsSync(join(dir, 'node_modules', 'kafkajs')), true)
  })

  it('compare without --brokers says in one line what it needs, and exits 2', async () => {
    const r = await run(
      [join(dir, 'dist', 'services', 'cli', 'main.js'), 'compare', '--source', 'generate', '--records', '100'],
      { KAFKA_BROKERS: '' }
    )
    assert.equal(r.code, 2, r.stderr)
    assert.equal(r.stdout, '')
    const lines = r.stderr.trimEnd().split('\n')
    assert.equal(lines.length, 1, r.stderr)
    assert.match(
      lines[0] ?? '',
      /^squeeze: missing --brokers: this installation cannot start a Kafka of its own .*pass --brokers HOST:PORT or set KAFKA_BROKERS/
    )
  })

  it('without testcontainers installed, acquireBroker says so and starts the embedded JVM broker', async () => {
    // Give this layout the embedded broker's pom and the jars already fetched, so only testcontainers is missing.
    cpSync(join(repoRoot(), 'kafka'), join(dir, 'kafka'), { recursive: true })
    symlinkSync(join(repoRoot(), '.kafka'), join(dir, '.kafka'))
    const script = join(dir, 'acquire.mjs')
    writeFileSync(
      script,
      `import { acquireBroker } from './dist/lib/embedded-broker/select-broker.js'
const logs = []
const broker = await acquireBroker((m) => logs.push(m))
await broker.stop()
process.stdout.write(JSON.stringify({ kind: broker.kind, logs }))
`
    )
    const r = await run([script], {
      KAFKA_BROKERS: '',
      SQUEEZE_NO_TESTCONTAINERS: '',
      SQUEEZE_REQUIRE_CONTAINER_BROKER: ''
    })
    assert.equal(r.code, 0, r.stderr)
    const out = JSON.parse(r.stdout) as { kind: string; logs: string[] }
    assert.equal(out.kind, 'jvm')
    assert.ok(
      out.logs.some((l) =>
        /^kafka: testcontainers is not installed \(a dev dependency\) \(checked in \d+ ms\); using the embedded JVM broker$/.test(
          l
        )
      ),
      out.logs.join('\n')
    )
  })

  it('with SQUEEZE_REQUIRE_CONTAINER_BROKER=1 (CI) the missing container path is an error, not a fall-back to the JVM broker', async () => {
    const script = join(dir, 'acquire-required.mjs')
    writeFileSync(
      script,
      `import { acquireBroker } from './dist/lib/embedded-broker/select-broker.js'
try {
  const broker = await acquireBroker(() => {})
  await broker.stop()
  process.stdout.write(broker.kind)
} catch (e) {
  process.stdout.write(e.code + ' ' + e.message)
}
`
    )
    const r = await run([script], {
      KAFKA_BROKERS: '',
      SQUEEZE_NO_TESTCONTAINERS: '',
      SQUEEZE_REQUIRE_CONTAINER_BROKER: '1'
    })
    assert.equal(r.code, 0, r.stderr)
    assert.match(
      r.stdout,
      /^SQUEEZE_ERR_BROKER_START kafka: SQUEEZE_REQUIRE_CONTAINER_BROKER=1 but the containerized broker is not available \(testcontainers is not installed \(a dev dependency\)\); not falling back to the embedded JVM broker$/
    )
  })
})
