import { parseArgs } from 'node:util'
import { parseCodecSpec } from '../lib/codecs/index.js'
import { levelMix } from '../lib/compare/level-mix.js'
import { createCluster, DEFAULT_CONNECTION } from '../lib/kafka/connection.js'
import { createLogger } from '../lib/log/logger.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../lib/producer/producer.js'
import type { ProducerRecord } from '../lib/producer/producer.js'
import { generateRecords, parseRateSchedule, RateSchedule } from '../lib/sources/generator-source.js'

/**
 * One keeping-up run in its own process (the parent measures its CPU with GNU time):
 *   node dist/bench/keeping-up-client.js --brokers B --topic T --codec zstd:adaptive --rate R:S,5R:S,R:S --records N
 * Generated http records go to squeeze's producer (defaults: linger.ms 100, batch.size 1 MiB, buffer.memory
 * 32 MiB) on the rate schedule, stamped with the time they are due. They are generated before the clock starts
 * (POOL_RECORDS of them, sent round and round) so the generator's own speed does not cap the rate. Time
 * blocked in send is the time intake waited on sendMany, i.e. on buffer.memory. Prints one JSON line.
 */

const POOL_RECORDS = 200_000
/** Records taken at once when more are due: what a source has ready at a time. */
const CHUNK = 1000

export interface KeepingUpSample {
  readonly generated: number
  readonly acked: number
  readonly failed: number
  readonly rejected: number
  readonly peakBufferedBytes: number
  readonly blockedSeconds: number
  readonly uncompressedBytes: number
  readonly compressedBytes: number
  readonly compressCpuSeconds: number
  /** From the first record to the last acknowledgement, against the schedule's own length. */
  readonly wallSeconds: number
  readonly levelMix: ReadonlyArray<{ level: number; share: number }>
}

async function main(): Promise<void> {
  const { values: v } = parseArgs({
    options: {
      brokers: { type: 'string' },
      topic: { type: 'string' },
      codec: { type: 'string' },
      rate: { type: 'string' },
      records: { type: 'string' }
    }
  })
  const topic = v.topic as string
  const log = createLogger({ level: 'warn', name: 'bench-keeping-up' })
  const producer = new Producer(
    { ...DEFAULT_PRODUCER_CONFIG, codec: parseCodecSpec(v.codec as string) },
    { cluster: createCluster({ ...DEFAULT_CONNECTION, brokers: (v.brokers as string).split(',') }, log), log }
  )
  const levels: Array<{ level: number | null; uncompressedBytes: number }> = []
  producer.onBatchAcked((b) => levels.push({ level: b.level, uncompressedBytes: b.uncompressedBytes }))
  await producer.start()
  const pool: Array<{ key: Buffer | null; value: Buffer | null }> = []
  for await (const item of generateRecords({ kind: 'http', seed: 1, records: POOL_RECORDS }))
    if (item.kind === 'record') pool.push({ key: item.key, value: item.value })
  const total = Number(v.records)
  const schedule = new RateSchedule(parseRateSchedule(v.rate as string))
  let generated = 0
  let rejected = 0
  let blockedNs = 0n
  let peak = 0
  const sampler = setInterval(() => {
    peak = Math.max(peak, producer.bufferedBytes)
  }, 5)
  const started = Date.now()
  const t0 = process.hrtime.bigint()
  while (generated < total) {
    const wait = started + schedule.dueAtMs(generated) - Date.now()
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait))
    const end = Math.min(total, generated + CHUNK, Math.max(generated + 1, schedule.dueBy(Date.now() - started)))
    const records: ProducerRecord[] = []
    for (; generated < end; generated++) {
      const r = pool[generated % pool.length] as { key: Buffer | null; value: Buffer | null }
      records.push({ topic, key: r.key, value: r.value, timestamp: started + Math.floor(schedule.dueAtMs(generated)) })
    }
    const before = process.hrtime.bigint()
    try {
      await producer.sendMany(records)
    } catch {
      rejected += records.length
    }
    blockedNs += process.hrtime.bigint() - before
    peak = Math.max(peak, producer.bufferedBytes)
  }
  await producer.flush()
  const wallSeconds = Number(process.hrtime.bigint() - t0) / 1e9
  clearInterval(sampler)
  await producer.close()
  const s = producer.snapshot()
  const sample: KeepingUpSample = {
    generated,
    acked: s.recordsAcked,
    failed: s.recordsFailed,
    rejected,
    peakBufferedBytes: peak,
    blockedSeconds: Number(blockedNs) / 1e9,
    uncompressedBytes: s.uncompressedBytes,
    compressedBytes: s.compressedBytes,
    compressCpuSeconds: s.compressCpuSeconds,
    wallSeconds,
    levelMix: levelMix(levels)
  }
  process.stdout.write(`${JSON.stringify(sample)}\n`)
}

await main()
