import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import type { CompareReportJson } from '../../lib/report/compare-json.js'
import { corpusLines, corpusPath } from '../helpers/corpus.js'
import { useTestKafka } from '../helpers/kafka.js'
import { runSqueeze } from '../helpers/squeeze-cli.js'

const kafka = useTestKafka()

describe('compare on the wrong input', () => {
  it('a syslog file read as http: exit 1 with the parse summary naming syslog, no report, no line per bad line', async () => {
    const result = await runSqueeze([
      'compare',
      '--source',
      'file',
      '--file',
      corpusPath('syslog_mtail_sftp_chroot.log'),
      '--kind',
      'http',
      '--brokers',
      kafka.broker.brokers.join(',')
    ])
    assert.equal(result.code, 1, result.stderr)
    assert.match(
      result.stderr,
      /0 of the first \d+ lines parse as http \(combined log format\); they look like syslog.*--kind syslog/
    )
    assert.equal(result.stdout, '', 'no table, no recommendation')
    assert.ok(result.stderr.split('\n').length < 5, result.stderr)
  })

  it('--kind auto (the default for a file) picks syslog; 5,000 bad lines after the first are one counted warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-wrong-input-'))
    try {
      const path = join(dir, 'mixed.log')
      const good = corpusLines('syslog_mtail_sftp_chroot.log')
      writeFileSync(path, `${[...good, ...Array.from({ length: 5000 }, (_, i) => `garbage ${i}`)].join('\n')}\n`)
      const json = join(dir, 'r.json')
      const result = await runSqueeze([
        'compare',
        '--source',
        'file',
        '--file',
        path,
        '--targets',
        'none,zstd:3',
        '--json',
        json,
        '--brokers',
        kafka.broker.brokers.join(',')
      ])
      assert.equal(result.code, 0, result.stderr)
      assert.match(result.stderr, /--kind auto: .*mixed\.log reads as syslog/)
      const warnings = result.stderr.split('\n').filter((line) => line.includes('did not parse'))
      assert.equal(warnings.length, 1, result.stderr)
      assert.match(warnings[0] ?? '', new RegExp(`"parseErrors":5000,"linesRead":${good.length + 5000}`))
      assert.ok(result.stderr.split('\n').length < 10, result.stderr)
      const report = JSON.parse(readFileSync(json, 'utf8')) as CompareReportJson
      assert.match(report.source.description, /\(syslog\)$/)
      assert.equal(report.source.records, good.length)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('an empty source topic is an error, not a table of zeros', async (t) => {
    const topic = await kafka.createTopic(t)
    const result = await runSqueeze([
      'compare',
      '--topic',
      topic,
      '--targets',
      'none,zstd:3',
      '--brokers',
      kafka.broker.brokers.join(',')
    ])
    assert.equal(result.code, 1, result.stderr)
    assert.match(result.stderr, /read no record from topic .*: nothing to compare, no recommendation/)
    assert.doesNotMatch(result.stdout, /recommendation/)
  })
})
