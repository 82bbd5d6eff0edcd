import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { corpusPath } from '../helpers/corpus.js'
import { useTestKafka } from '../helpers/kafka.js'
import { runSqueeze } from '../helpers/squeeze-cli.js'

const kafka = useTestKafka()
const WIDTH = 100

function widest(text: string): number {
  return Math.max(0, ...text.split('\n').map((line) => line.length))
}

function assertFits(
  label: string,
  result: { code: number; stdout: string; stderr: string },
  width: number = WIDTH
): void {
  assert.equal(result.code, 0, `${label}: ${result.stderr}`)
  assert.ok(result.stdout.trim() !== '', `${label}: a report`)
  const long = result.stdout.split('\n').filter((line) => line.length > width)
  assert.deepEqual(long, [], `${label}: lines over ${width} columns`)
}

describe("every command's terminal report fits 100 columns without --wide, and 80 with COLUMNS=80", () => {
  it('produce, copy, consume, compare (copy mode, against what the topic stores, and projection with a what-if), bench (file and topic), audit', async (t) => {
    const brokers = kafka.broker.brokers.join(',')
    const topic = await kafka.createTopic(t, { partitions: 2 })
    const produced = await runSqueeze([
      'produce',
      '--brokers',
      brokers,
      '--topic',
      topic,
      '--records',
      '4000',
      '--codec',
      'lz4',
      '--log-level',
      'warn'
    ])
    assertFits('produce', produced)
    const copyTopic = await kafka.createTopic(t)
    const copied = await runSqueeze([
      'copy',
      '--brokers',
      brokers,
      '--topic',
      topic,
      '--targets',
      'zstd:3,gzip:6',
      '--destination',
      `${copyTopic}.{target}`,
      '--until-end',
      '--log-level',
      'warn'
    ])
    assertFits('copy', copied)
    assertFits('consume', await runSqueeze(['consume', '--brokers', brokers, '--topic', topic, '--log-level', 'warn']))
    const compare = await runSqueeze([
      'compare',
      '--brokers',
      brokers,
      '--topic',
      topic,
      '--targets',
      'none,lz4:1,zstd:3,zstd:adaptive,gzip:9',
      '--consumers',
      '3'
    ])
    assertFits('compare', compare)
    assert.match(compare.stdout, /^target +stored +ratio +vs none +vs current +compress +decompress +broker$/m)
    assertFits(
      'compare --mode projection',
      await runSqueeze([
        'compare',
        '--brokers',
        brokers,
        '--topic',
        topic,
        '--mode',
        'projection',
        '--targets',
        'none,zstd:3',
        '--linger-ms',
        '0,5,100',
        '--batch-size',
        '16KiB,1MiB'
      ])
    )
    assertFits(
      'bench --file',
      await runSqueeze([
        'bench',
        '--file',
        corpusPath('access_apache_semicomplete_2015.log'),
        '--records',
        '3000',
        '--codecs',
        'lz4:1,zstd:3',
        '--runs',
        '1'
      ])
    )
    assertFits(
      'bench --topic',
      await runSqueeze(['bench', '--brokers', brokers, '--topic', topic, '--codecs', 'lz4:1,zstd', '--runs', '1'])
    )
    const audit = ['audit', '--brokers', brokers, '--topics', topic, '--quiet']
    assertFits('audit', await runSqueeze(audit))
    // COLUMNS, where stdout is not a terminal: 80 columns, the narrowest an operator's terminal is.
    const columns80 = { env: { COLUMNS: '80' } }
    assertFits('audit, 80 columns', await runSqueeze(audit, columns80), 80)
    const consumed80 = await runSqueeze(
      ['consume', '--brokers', brokers, '--topic', topic, '--log-level', 'warn'],
      columns80
    )
    assertFits('consume, 80 columns', consumed80, 80)
    assert.ok(consumed80.stdout.includes(`${topic} `), 'the whole topic name')
    assertFits(
      'compare, 80 columns',
      await runSqueeze(['compare', '--brokers', brokers, '--topic', topic, '--targets', 'none,zstd:3'], columns80),
      80
    )
    // --wide: every column, as before; the compare table is then wider than any terminal.
    const wide = await runSqueeze([
      'compare',
      '--brokers',
      brokers,
      '--topic',
      topic,
      '--targets',
      'none,zstd:3',
      '--wide'
    ])
    assert.equal(wide.code, 0, wide.stderr)
    assert.ok(widest(wide.stdout) > WIDTH)
    assert.match(
      wide.stdout,
      /compress MB\/s\/core +decompress cpu s\/GiB +decode cpu s\/GiB +consumer rec\/s +recompression/
    )
  })
})
