import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'

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
- Broker CPU (end to end, copier): the embedded broker's user+system CPU from /proc over the same span; on 2 cores,
  client plus broker CPU is what bounds a run. The broker's G1 has 4 MiB regions: at the default 1 MiB, every
  produce request near 1 MiB is a humongous allocation that starts a concurrent marking cycle.
- Medians of \`BENCH_RUNS\` runs (default 3), peers interleaved and rotated per round after an untimed warm-up.
- Targets: each section's goal, checked on this run's medians, listed last.`

function git(args: readonly string[]): string | undefined {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return undefined
  }
}

/** The commit the run is built from, marked when the checkout holds changes to code (not to docs): read at start. */
export function buildCommit(): string {
  const head = git(['rev-parse', '--short', 'HEAD']) ?? 'unknown'
  const changed = git(['status', '--porcelain', '--', 'lib', 'services', 'bench', 'native', 'package.json'])
  return changed === undefined || changed === '' ? head : `${head} with uncommitted changes`
}

/**
 * The machine's 1-minute load average, sampled every 30 s while the run lasts: the machine may be shared, and the
 * load it carried is part of reading the figures.
 */
export class LoadSampler {
  private readonly samples: number[] = []
  private readonly timer: NodeJS.Timeout

  constructor(intervalMs = 30_000) {
    this.sample()
    this.timer = setInterval(() => this.sample(), intervalMs).unref()
  }

  private sample(): void {
    this.samples.push(loadavg()[0] ?? Number.NaN)
  }

  /** Stops sampling; min, median and max of what was seen. */
  stop(): { min: number; median: number; max: number; samples: number } {
    clearInterval(this.timer)
    this.sample()
    const sorted = [...this.samples].sort((a, b) => a - b)
    return {
      min: sorted[0] ?? Number.NaN,
      median: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
      max: sorted[sorted.length - 1] ?? Number.NaN,
      samples: sorted.length
    }
  }
}

export interface RunFacts {
  readonly commit: string
  readonly runs: number
  readonly seconds: number
  readonly load: ReturnType<LoadSampler['stop']>
  /** Which broker the run used: the embedded JVM or one named by KAFKA_BROKERS. */
  readonly broker: string
  /** librdkafka's version in @confluentinc/kafka-javascript, null when that peer was left out. */
  readonly librdkafkaConfluent: string | null
}

/** The BENCH_* and KAFKA_BROKERS settings the run was given: they change what a figure means. */
export function benchEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.entries(env)
    .filter(([name]) => name.startsWith('BENCH_') || name === 'KAFKA_BROKERS')
    .map(([name, value]) => `${name}=${value ?? ''}`)
    .sort()
}

/** The machine, build, load and settings the figures were taken with, as one paragraph. */
export function machineLine(facts: RunFacts): string {
  const cpu = cpus()
  const env = benchEnv()
  const { load } = facts
  return [
    `Run of ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC at commit \`${facts.commit}\`, ` +
      `\`${[...env, 'npm run bench'].join(' ')}\` (medians of ${facts.runs}), ${Math.round(facts.seconds)} s in total.`,
    `Machine: ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown CPU'}), ` +
      `${Math.round(totalmem() / 1024 ** 3)} GiB, Node ${process.versions.node}; broker: ${facts.broker}; ` +
      `@confluentinc/kafka-javascript: ${facts.librdkafkaConfluent === null ? 'left out (BENCH_SKIP=confluent)' : `librdkafka ${facts.librdkafkaConfluent}`}.`,
    `1-minute load average during the run (${load.samples} samples, every 30 s): ` +
      `${load.min.toFixed(1)} min, ${load.median.toFixed(1)} median, ${load.max.toFixed(1)} max` +
      `${load.median > cpu.length ? `, above the ${cpu.length} cores: the machine was shared and wall-clock figures read low` : ''}.`
  ].join('\n')
}

/**
 * docs/benchmarks.md: the method, the machine and commit, then this run's tables. It holds the last full run only;
 * earlier runs are in git's history of the page.
 */
export function writeResultsPage(
  path: string,
  facts: RunFacts,
  sections: ReadonlyArray<{ title: string; body: string }>
): void {
  const text = [
    '<!-- Written by `npm run bench` (bench/lib/results-page.ts); edit the generator, not this file. -->',
    '',
    '# Benchmarks',
    '',
    'The last full run of `npm run bench` (scripts/bench.sh), which writes this page; earlier runs are in its git history.',
    'Why the code is shaped as it is: [design.md](design.md).',
    '',
    METHOD,
    '',
    '## Machine',
    '',
    machineLine(facts),
    '',
    ...sections.flatMap((s) => [`## ${s.title}`, '', s.body, ''])
  ].join('\n')
  writeFileSync(path, text)
}
