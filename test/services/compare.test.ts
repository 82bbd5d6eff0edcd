import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'
import { Ajv } from 'ajv'
import type { CompareReportJson } from '../../lib/report/compare-json.js'
import { formatFor, type LogKind } from '../../lib/formats/index.js'
import { CORPUS_FIXTURES, corpusLines, corpusPath } from '../helpers/corpus.js'
import { useTestKafka } from '../helpers/kafka.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))
const SCHEMA = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../schema/compare-report.schema.json', import.meta.url)), 'utf8')
) as object

function squeeze(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, KAFKA_BROKERS: '' }, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr })
      }
    )
  })
}

/** Lines of a fixture its format accepts: what the file source sends (it skips and counts the others). */
function parsedLines(file: string, kind: LogKind): number {
  const format = formatFor(kind)
  return corpusLines(file).filter((line) => {
    try {
      format.encodeLine(line)
      return true
    } catch {
      return false
    }
  }).length
}

const kafka = useTestKafka()

function assertPhysicallySound(report: CompareReportJson, label: string): void {
  const none = report.targets.find((t) => t.target === 'none')
  assert.ok(none, 'a none target')
  for (const t of report.targets) {
    assert.equal(
      t.records,
      report.source.records,
      `${label} ${t.target}: every destination holds the source's record count`
    )
    assert.equal(t.digest, none.digest, `${label} ${t.target}: same records as none (order-insensitive digest)`)
    assert.ok(
      Math.abs(t.storedBytes - t.sentBytes) <= t.sentBytes * 0.01,
      `${label} ${t.target}: broker stored ${t.storedBytes} vs sent ${t.sentBytes}`
    )
    assert.equal(t.recompression.verdict, 'kept', `${label} ${t.target}: the broker kept the batches`)
    if (t.target !== 'none') assert.ok(t.storedBytes < none.storedBytes, `${label} ${t.target} stores less than none`)
  }
  const z1 = report.targets.find((t) => t.target === 'zstd:1')
  const z9 = report.targets.find((t) => t.target === 'zstd:9')
  if (z1 !== undefined && z9 !== undefined)
    assert.ok(z9.storedBytes <= z1.storedBytes, `${label}: zstd:9 stores no more than zstd:1`)
}

describe('squeeze compare', () => {
  it("on generated Cap'n Proto HTTP logs: identical traffic per target, physically ordered results, valid JSON, SVG and Markdown", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-compare-'))
    const result = await squeeze([
      'compare',
      '--brokers',
      kafka.broker.brokers.join(','),
      '--source',
      'generate',
      '--kind',
      'http',
      '--records',
      '20000',
      '--json',
      join(dir, 'r.json'),
      '--markdown',
      join(dir, 'r.md'),
      '--chart',
      join(dir, 'r.svg'),
      '--log-level',
      'error'
    ])
    assert.equal(result.code, 0, result.stderr)
    const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as CompareReportJson
    assert.equal(report.source.records, 20000)
    assert.equal(report.targets.length, 8)
    assertPhysicallySound(report, 'http')
    const ajv = new Ajv({ allErrors: true })
    assert.ok(ajv.validate(SCHEMA, report), JSON.stringify(ajv.errors))
    const svg = readFileSync(join(dir, 'r.svg'), 'utf8')
    assert.equal((svg.match(/<circle class="target"/g) ?? []).length, report.targets.length)
    for (const t of report.targets) assert.ok(svg.includes(`>${t.target}<`), `label ${t.target} in the chart`)
    const markdown = readFileSync(join(dir, 'r.md'), 'utf8')
    for (const t of report.targets) assert.match(markdown, new RegExp(`\\| ${t.target.replace(':', ':')} `))
    assert.match(result.stdout, /recommendation: /)
    assert.ok(report.recommendation !== null)
    // Format rows: the recommended codec's batches holding the records as combined log lines and as JSON.
    assert.deepEqual(
      report.formats?.map((f) => [f.format, f.target, f.records, f.skippedRecords]),
      [
        ['text', report.recommendation.target, 20000, 0],
        ['json', report.recommendation.target, 20000, 0]
      ]
    )
    for (const f of report.formats ?? [])
      assert.ok(f.storedBytes > 0 && f.decodeCpuSecondsPerGiB > 0, `${f.format}: stored bytes and decode CPU measured`)
    for (const label of ['as text lines', 'as JSON']) {
      assert.ok(
        result.stdout.includes(`${report.recommendation.target} ${label}`),
        `the terminal table has the ${label} row`
      )
      assert.ok(markdown.includes(`${report.recommendation.target} ${label}`), `the Markdown has the ${label} row`)
    }
    // Nothing is left behind: destinations and the filled source are deleted.
    const leftovers = (await kafka.admin.listTopics()).filter((t) => t.startsWith('squeeze-compare.'))
    assert.deepEqual(leftovers, [])
  })

  for (const { file, kind } of CORPUS_FIXTURES) {
    it(`on the real ${file}: every destination holds the same records, and the codecs order physically`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'squeeze-compare-'))
      const result = await squeeze([
        'compare',
        '--brokers',
        kafka.broker.brokers.join(','),
        '--source',
        'file',
        '--file',
        corpusPath(file),
        '--kind',
        kind,
        '--targets',
        'none,gzip:6,snappy,lz4:1,zstd:1,zstd:9',
        '--json',
        join(dir, 'r.json'),
        '--log-level',
        'error'
      ])
      assert.equal(result.code, 0, result.stderr)
      const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as CompareReportJson
      assert.equal(report.source.records, parsedLines(file, kind))
      assertPhysicallySound(report, file)
      console.log(`${file}: ${report.targets.map((t) => `${t.target} ${t.ratio.toFixed(2)}x`).join(', ')}`)
    })
  }

  it('wrong inputs: one clear message, non-zero exit, nothing half-created', async () => {
    const brokers = kafka.broker.brokers.join(',')
    const before = new Set(await kafka.admin.listTopics())
    const missing = await squeeze([
      'compare',
      '--brokers',
      brokers,
      '--topic',
      'no-such-source',
      '--log-level',
      'silent'
    ])
    assert.equal(missing.code, 1)
    assert.match(missing.stderr.trim(), /^squeeze: source topic no-such-source not found/)
    const badTarget = await squeeze([
      'compare',
      '--brokers',
      brokers,
      '--topic',
      'x',
      '--targets',
      'zstd:99',
      '--log-level',
      'silent'
    ])
    assert.equal(badTarget.code, 2)
    assert.match(badTarget.stderr.trim(), /^squeeze: invalid zstd level 99/)
    const unreachable = await squeeze(['compare', '--brokers', '127.0.0.1:9', '--topic', 'x', '--log-level', 'silent'])
    assert.equal(unreachable.code, 1)
    assert.match(unreachable.stderr, /squeeze: cannot reach/)
    // A destination that already exists: refused before anything is created or copied.
    const source = await kafka.createTopic(undefined, { partitions: 1 })
    await kafka.createTopic(undefined, {
      name: `${source}.zstd-3`,
      partitions: 1,
      configs: { 'compression.type': 'gzip' }
    })
    const taken = await squeeze([
      'compare',
      '--brokers',
      brokers,
      '--topic',
      source,
      '--targets',
      'none,zstd:3',
      '--log-level',
      'silent'
    ])
    assert.equal(taken.code, 2)
    assert.match(taken.stderr.trim(), /already exist/)
    const after = (await kafka.admin.listTopics()).filter((t) => !before.has(t))
    assert.deepEqual(after.sort(), [source, `${source}.zstd-3`].sort(), 'no destination was created')
    await kafka.admin.deleteTopics({ topics: after })
  })
})
