import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { REFERENCE_DOCS } from '../../services/cli/reference-docs.js'
import { useTestKafka } from '../helpers/kafka.js'
import { startSqueeze } from '../helpers/squeeze-cli.js'

const kafka = useTestKafka()

function committed(path: string): string {
  return readFileSync(fileURLToPath(new URL(`../../../${path}`, import.meta.url)), 'utf8')
}

/** The metric names and types of one command's section of docs/metrics.md. */
function documented(command: string): string[] {
  const section = committed('docs/metrics.md').split(`## squeeze ${command}\n`)[1]?.split('\n## ')[0] ?? ''
  return [...section.matchAll(/^\| `(\w+)` \| (\w+) \|/gm)].map((m) => `${m[1]} ${m[2]}`).sort()
}

describe('reference pages generated from the code', () => {
  for (const [path, render] of Object.entries(REFERENCE_DOCS)) {
    it(`${path} is what \`npm run docs\` writes (run it after changing a flag, a --help text or a metric)`, async () => {
      assert.equal(committed(path), await render())
    })
  }

  it('docs/metrics.md lists exactly what a running consume serves on /metrics', async (t) => {
    const topic = await kafka.createTopic(t)
    const consume = await startSqueeze([
      'consume',
      '--brokers',
      kafka.broker.brokers.join(','),
      '--topic',
      topic,
      '--follow',
      '--format',
      'none'
    ])
    t.after(async () => {
      consume.kill('SIGTERM')
      await consume.exited
    })
    const expected = documented('consume')
    let served: string[] = []
    // The group's metrics are registered once the reader runs: scraped until the service is fully up.
    for (let attempt = 0; attempt < 150 && served.length < expected.length; attempt++) {
      const text = await fetch(`http://127.0.0.1:${consume.metricsPort}/metrics`).then(
        (r) => r.text(),
        () => ''
      )
      served = [...text.matchAll(/^# TYPE (\w+) (\w+)$/gm)]
        .map((m) => `${m[1]} ${m[2]}`)
        .filter((m) => m.startsWith('squeeze_') && !/^squeeze_(process|nodejs)_/.test(m))
        .sort()
      if (served.length < expected.length) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    assert.deepEqual(served, expected, consume.stderr())
  })
})
