import assert from 'node:assert/strict'
import { mkdtempSync, renameSync, truncateSync, copyFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { useTestKafka } from '../helpers/kafka.js'
import { poll } from '../helpers/poll.js'
import { appendLines, logLine, recordCount, startShipper, valueCounts, type Shipper } from '../helpers/shipper.js'

const kafka = useTestKafka()

function expected(name: string, from: number, to: number): string[] {
  const lines: string[] = []
  for (let n = from; n < to; n++) lines.push(logLine(name, n))
  return lines
}

async function stop(shipper: Shipper): Promise<void> {
  shipper.child.kill('SIGTERM')
  assert.equal(await shipper.exited, 0, shipper.output())
}

async function waitForRecords(topic: string, n: number, shipper: Shipper): Promise<void> {
  const describeState = (): string => shipper.output().slice(-3000)
  await poll(
    `${n} records`,
    () => recordCount(kafka, topic),
    (c) => c >= n,
    90_000,
    { describeState }
  )
}

function assertOnce(counts: Map<string, number>, lines: readonly string[]): void {
  const missing = lines.filter((l) => !counts.has(l))
  const twice = lines.filter((l) => (counts.get(l) ?? 0) > 1)
  assert.deepEqual({ missing: missing.slice(0, 5), twice: twice.slice(0, 5) }, { missing: [], twice: [] })
  assert.equal(
    [...counts.values()].reduce((a, b) => a + b, 0),
    lines.length,
    'no other records'
  )
}

describe('produce --follow: file sets and read positions', () => {
  it('SIGTERM then restart sends every line once; a file a glob gains while running is shipped, with its source header', async (t) => {
    const topic = await kafka.createTopic(t)
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-ship-'))
    const state = join(dir, 'state')
    const args = ['--file', join(dir, '*.log'), '--exclude', join(dir, 'skip*.log'), '--follow', '--state-dir', state]
    appendLines(join(dir, 'a.log'), 'a', 0, 2000)
    writeFileSync(join(dir, 'skip-me.log'), `${logLine('skip', 0)}\n`)
    const first = startShipper(kafka, topic, args)
    await waitForRecords(topic, 2000, first)
    appendLines(join(dir, 'b.log'), 'b', 0, 500) // a new file matching the glob
    await waitForRecords(topic, 2500, first)
    await stop(first)
    appendLines(join(dir, 'a.log'), 'a', 2000, 3000)
    const second = startShipper(kafka, topic, args)
    await waitForRecords(topic, 3500, second)
    await stop(second)
    assertOnce(await valueCounts(kafka, topic), [...expected('a', 0, 3000), ...expected('b', 0, 500)])
    const records = (await kafka.readAll([topic])).flatMap(({ batch }) => batch.records)
    for (const record of records) {
      const header = record.headers.find((h) => h.key === 'squeeze.source.file')?.value?.toString()
      const value = record.value?.toString() ?? ''
      assert.equal(header, join(dir, value.includes(' a: ') ? 'a.log' : 'b.log'))
    }
  })

  it('rotation while the shipper is down (create, then copytruncate): the lines written before it are all read once', async (t) => {
    const topic = await kafka.createTopic(t)
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-ship-'))
    const path = join(dir, 'app.log')
    const args = ['--file', path, '--follow', '--state-dir', join(dir, 'state')]
    appendLines(path, 'app', 0, 1000)
    let shipper = startShipper(kafka, topic, args)
    await waitForRecords(topic, 1000, shipper)
    await stop(shipper)
    // create: lines appended, then the file renamed away and a new one started, all while down.
    appendLines(path, 'app', 1000, 1500)
    renameSync(path, `${path}.1`)
    appendLines(path, 'app', 1500, 1800)
    shipper = startShipper(kafka, topic, args)
    await waitForRecords(topic, 1800, shipper)
    await stop(shipper)
    // copytruncate: lines appended, the file copied and truncated, then written on, all while down.
    appendLines(path, 'app', 1800, 2100)
    copyFileSync(path, `${path}.2`)
    truncateSync(path, 0)
    appendLines(path, 'app', 2100, 2200)
    shipper = startShipper(kafka, topic, args)
    await waitForRecords(topic, 2200, shipper)
    await stop(shipper)
    assertOnce(await valueCounts(kafka, topic), expected('app', 0, 2200))
  })

  it('CRI container logs: P parts are joined into one record, with namespace, pod and container headers and the line time', async (t) => {
    const topic = await kafka.createTopic(t)
    const dir = mkdtempSync(join(tmpdir(), 'squeeze-cri-'))
    const path = join(dir, `web-7d9f_shop_nginx-${'ab'.repeat(32)}.log`)
    writeFileSync(
      path,
      [
        '2026-01-02T03:04:05.123456789Z stdout P first part, ',
        '2026-01-02T03:04:05.223456789Z stdout P second part, ',
        '2026-01-02T03:04:05.323456789Z stdout F last part',
        '2026-01-02T03:04:06.000000000Z stderr F a whole line',
        ''
      ].join('\n')
    )
    const shipper = startShipper(kafka, topic, [
      '--file',
      `cri:${join(dir, '*.log')}`,
      '--follow',
      '--state-dir',
      join(dir, 'state')
    ])
    await waitForRecords(topic, 2, shipper)
    await stop(shipper)
    const records = (await kafka.readAll([topic])).flatMap(({ batch }) => batch.records)
    assert.deepEqual(
      records.map((r) => r.value?.toString()),
      ['first part, second part, last part', 'a whole line']
    )
    const header = (name: string): string | undefined =>
      records[0]?.headers.find((h) => h.key === name)?.value?.toString()
    assert.deepEqual(
      [
        header('squeeze.k8s.namespace'),
        header('squeeze.k8s.pod'),
        header('squeeze.k8s.container'),
        header('squeeze.source.file')
      ],
      ['shop', 'web-7d9f', 'nginx', path]
    )
    assert.equal(records[0]?.timestamp, Date.parse('2026-01-02T03:04:05.323Z'))
  })
})
