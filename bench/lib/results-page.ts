import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'

/** How the figures are taken, in short; docs/design.md has the reasons behind the method. */
export const METHOD = `## Method

- Every client runs on the same machine against the same local broker (the embedded Kafka JVM unless
  \`KAFKA_BROKERS\` names one), with the same inputs and settings: zstd:3 and LZ4's fast compressor, \`linger.ms=100\`,
  \`batch.size=1048576\`, acks=all, idempotence on, topics of 3 partitions with \`compression.type=producer\`.
- Inputs: \`corpus\`, the real access log in \`test/fixtures/corpus/\` replayed to 200,000 records; \`http\`, 100,000
  generated Cap'n Proto HTTP records.
- records/s: Node clients in-process from the first send to the last acknowledgement, second pass of two; kcat
  its marginal rate over the same records once and twice; Java its own tools' figures.
- CPU s per GB: the child's user+system CPU less its start-up, over the value bytes. Stored bytes: DescribeLogDirs.
- Medians of \`BENCH_RUNS\` runs (default 3), peers interleaved and rotated per round after an untimed warm-up.`

function commit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  } catch {
    return 'unknown'
  }
}

/** The machine and build the figures were taken on, as one paragraph. */
export function machineLine(runs: number): string {
  const cpu = cpus()
  return (
    `Run of ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC at commit \`${commit()}\`, ` +
    `\`BENCH_RUNS=${runs} npm run bench\`: ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown CPU'}), ` +
    `${Math.round(totalmem() / 1024 ** 3)} GiB, Node ${process.versions.node}.`
  )
}

/**
 * docs/benchmarks.md: the method, the machine and commit, then this run's tables. It holds the last full run only;
 * earlier runs are in git's history of the page.
 */
export function writeResultsPage(
  path: string,
  runs: number,
  sections: ReadonlyArray<{ title: string; body: string }>
): void {
  const text = [
    '# Benchmarks',
    '',
    'The last full run of `npm run bench` (scripts/bench.sh), which writes this page; earlier runs are in its git history.',
    'Why the code is shaped as it is: [design.md](design.md).',
    '',
    METHOD,
    '',
    '## Machine',
    '',
    machineLine(runs),
    '',
    ...sections.flatMap((s) => [`## ${s.title}`, '', s.body, ''])
  ].join('\n')
  writeFileSync(path, text)
}
