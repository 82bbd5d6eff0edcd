import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { REFERENCE_DOCS } from '../../services/cli/reference-docs.js'
import { useTestKafka } from '../helpers/kafka.js'
import { runSqueeze, startSqueeze } from '../helpers/squeeze-cli.js'

const kafka = useTestKafka()

function committed(path: string): string {
  return readFileSync(fileURLToPath(new URL(`../../../${path}`, import.meta.url)), 'utf8')
}

/** A metric as the page lists it, or as /metrics serves it: type and label names. */
type Shape = { type: string; labels: string[] }

/** The metrics of one command's section of docs/metrics.md, by name. */
function documented(command: string): Map<string, Shape> {
  const section = committed('docs/metrics.md').split(`## squeeze ${command}\n`)[1]?.split('\n## ')[0] ?? ''
  return new Map(
    [...section.matchAll(/^\| `(\w+)` \| (\w+) \| ([^|]*) \|/gm)].map((m) => [
      m[1] as string,
      { type: m[2] as string, labels: [...(m[3] as string).matchAll(/`(\w+)`/g)].map((l) => l[1] as string).sort() }
    ])
  )
}

/**
 * squeeze's own metrics in a /metrics text, by name: the type from `# TYPE`, the label names from its samples
 * (histograms' `le` aside). A labelled metric with no sample yet has no label names to show.
 */
function scraped(text: string): Map<string, Shape & { sampled: boolean }> {
  const metrics = new Map<string, Shape & { sampled: boolean }>()
  for (const [, name, type] of text.matchAll(/^# TYPE (\w+) (\w+)$/gm))
    if (name?.startsWith('squeeze_') && !/^squeeze_(process|nodejs)_/.test(name))
      metrics.set(name, { type: type as string, labels: [], sampled: false })
  for (const [, sample, labels] of text.matchAll(/^(\w+)(?:\{([^}]*)\})? \S+$/gm)) {
    const name = sample?.replace(/_(bucket|sum|count)$/, '') ?? ''
    const metric = metrics.get(metrics.get(sample ?? '') === undefined ? name : (sample ?? ''))
    if (metric === undefined) continue
    const names = [...(labels ?? '').matchAll(/(\w+)="/g)].map((l) => l[1] as string).filter((l) => l !== 'le')
    metric.labels = [...new Set([...metric.labels, ...names])].sort()
    metric.sampled = true
  }
  return metrics
}

/**
 * Starts `squeeze <command>` with --metrics-port and scrapes it until every metric the page lists for the
 * command is served and `flowing` has a sample (the service is moving records), then stops it.
 */
async function scrapeRunning(
  command: string,
  args: readonly string[],
  flowing: string
): Promise<Map<string, Shape & { sampled: boolean }>> {
  const service = await startSqueeze([command, '--brokers', kafka.broker.brokers.join(','), ...args])
  const expected = documented(command)
  let served = new Map<string, Shape & { sampled: boolean }>()
  try {
    // Some metrics are registered once a part of the service runs: scraped until the service is fully up.
    for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
      const text = await fetch(`http://127.0.0.1:${service.metricsPort}/metrics`).then(
        (r) => r.text(),
        () => ''
      )
      served = scraped(text)
      if (served.size >= expected.size && served.get(flowing)?.sampled === true) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  } finally {
    // Stopped here, before the test's topic is deleted: a producer flushing into a deleted topic waits out
    // delivery.timeout.ms.
    service.kill('SIGTERM')
    await service.exited
  }
  assert.equal(served.get(flowing)?.sampled, true, `${flowing} never got a sample: ${service.stderr()}`)
  return served
}

/** The page's names and types equal the served ones; every served sample carries exactly the page's labels. */
function assertMatchesPage(command: string, served: Map<string, Shape & { sampled: boolean }>): void {
  const expected = documented(command)
  assert.ok(expected.size > 0, `docs/metrics.md has no section for squeeze ${command}`)
  const types = (m: Map<string, Shape>): string[] => [...m].map(([name, s]) => `${name} ${s.type}`).sort()
  assert.deepEqual(types(served), types(expected))
  const sampled = [...served].filter(([, s]) => s.sampled)
  assert.ok(
    sampled.some(([, s]) => s.labels.length > 0),
    'no labelled metric had a sample to check'
  )
  for (const [name, s] of sampled) assert.deepEqual(s.labels, expected.get(name)?.labels, `labels of ${name}`)
}

/** Fills a new topic with generated records through the CLI, for a consumer or copier to read. */
async function filledTopic(t: TestContext): Promise<string> {
  const topic = await kafka.createTopic(t, { partitions: 2 })
  const run = await runSqueeze([
    'produce',
    '--brokers',
    kafka.broker.brokers.join(','),
    '--topic',
    topic,
    '--records',
    '2000',
    '--quiet'
  ])
  assert.equal(run.code, 0, run.stderr)
  return topic
}

describe('reference pages generated from the code', () => {
  for (const [path, render] of Object.entries(REFERENCE_DOCS)) {
    it(`${path} is what \`npm run docs\` writes (run it after changing a flag, a --help text or a metric)`, async () => {
      assert.equal(committed(path), await render())
    })
  }

  it('docs/metrics.md lists exactly what a running produce serves on /metrics, with its labels', async (t) => {
    const topic = await kafka.createTopic(t, { partitions: 2 })
    const served = await scrapeRunning(
      'produce',
      ['--topic', topic, '--rate', '200', '--records', '1000000', '--quiet', '-X', 'linger.ms=50'],
      'squeeze_records_produced_total'
    )
    assertMatchesPage('produce', served)
  })

  it('docs/metrics.md lists exactly what a running consume serves on /metrics, with its labels', async (t) => {
    const topic = await filledTopic(t)
    const served = await scrapeRunning(
      'consume',
      ['--topic', topic, '--follow', '--format', 'none'],
      'squeeze_records_consumed_total'
    )
    assertMatchesPage('consume', served)
  })

  it('docs/metrics.md lists exactly what a running copy serves on /metrics, with its labels', async (t) => {
    const topic = await filledTopic(t)
    const served = await scrapeRunning(
      'copy',
      ['--topic', topic, '--targets', 'zstd:3,lz4'],
      'squeeze_copier_source_records_total'
    )
    assertMatchesPage('copy', served)
  })

  it('docs/metrics.md has a section for each service that serves /metrics (those run by runService), no other', () => {
    const sections = [...committed('docs/metrics.md').matchAll(/^## squeeze (\w+)$/gm)].map((m) => m[1]).sort()
    const dir = fileURLToPath(new URL('../../../services/', import.meta.url))
    const serving = readdirSync(dir)
      .filter((name) => existsSync(join(dir, name, 'main.ts')))
      .filter((name) => readFileSync(join(dir, name, 'main.ts'), 'utf8').includes('return runService('))
      .map((name) => readFileSync(join(dir, name, 'main.ts'), 'utf8').match(/Usage: squeeze (\w+)/)?.[1] ?? name)
      .sort()
    assert.ok(serving.length > 0, 'no service found under services/')
    assert.deepEqual(sections, serving)
  })
})
