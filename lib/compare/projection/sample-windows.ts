import type { Admin } from 'kafkajs'
import { AbortedTransactions } from '../../consumer/aborted-transactions.js'
import { ErrorCodes, SqueezeError } from '../../errors.js'
import { describeKafkaError, KafkaErrorCode } from '../../kafka/error-codes.js'
import { fetchRequest, ISOLATION, type FetchedPartition } from '../../kafka/fetch-request.js'
import type { KafkajsCluster } from '../../kafka/kafkajs-internals.js'
import { isAbortMarker, readBatch, splitBatches } from '../../protocol/record-batch-reader.js'
import type { SourceRecord } from './rebatch.js'
import type { SourceRead } from './read-source.js'

/** Where the sample came from: enough for a reader to judge how much of the topic it stands for. */
export interface SamplingPlan {
  /** Records asked for with --sample. */
  readonly requestedRecords: number
  readonly windowsPerPartition: number
  readonly partitions: number
  readonly windows: ReadonlyArray<{ readonly partition: number; readonly fromOffset: number; readonly records: number; readonly fromMs: number; readonly toMs: number }>
  /** Records the topic held when sampled (end minus start offsets, every partition). */
  readonly topicRecords: number
  /** Earliest and latest record timestamp in the sample: the time span it covers. */
  readonly fromMs: number
  readonly toMs: number
}

export const DEFAULT_WINDOWS = 8

/**
 * Reads about `records` records as `windows` equal windows per partition, spread evenly over each partition's
 * retained offsets (and so over its time range), each partition's share in proportion to its size: a topic
 * whose traffic changed over time is sampled across the change, not at its oldest end.
 */
export async function sampleWindows(deps: { cluster: KafkajsCluster; admin: Admin }, topic: string, records: number, windows: number = DEFAULT_WINDOWS): Promise<SourceRead & { byPartition: Map<number, SourceRecord[]>; plan: SamplingPlan; windows: Array<{ partition: number; records: SourceRecord[] }> }> {
  await deps.cluster.addMultipleTargetTopics([topic])
  const offsets = (await deps.admin.fetchTopicOffsets(topic)).map((o) => ({ partition: o.partition, low: Number(o.low), high: Number(o.high) }))
  const topicRecords = offsets.reduce((n, o) => n + o.high - o.low, 0)
  const byPartition = new Map<number, SourceRecord[]>()
  const plan: Array<SamplingPlan['windows'][number]> = []
  const read: Array<{ partition: number; records: SourceRecord[] }> = []
  let bytes = 0
  for (const { partition, low, high } of offsets) {
    const span = high - low
    const share = topicRecords === 0 ? 0 : Math.min(span, Math.round((records * span) / topicRecords))
    // A sample as large as the partition is the partition: one window, no overlaps.
    const count = share >= span ? 1 : windows
    const perWindow = share >= span ? span : Math.ceil(share / windows)
    const list: SourceRecord[] = []
    byPartition.set(partition, list)
    for (let i = 0; i < count && perWindow > 0; i++) {
      const from = Math.max(low, Math.min(high - perWindow, low + Math.floor(((i + 0.5) * span) / count - perWindow / 2)))
      const fresh = await readRange(deps.cluster, topic, partition, from, Math.min(high, from + perWindow))
      read.push({ partition, records: fresh.map((r) => r.record) })
      for (const r of fresh) {
        list.push(r.record)
        bytes += (r.record.key?.length ?? 0) + (r.record.value?.length ?? 0) + r.record.headers.reduce((n, h) => n + h.key.length + (h.value?.length ?? 0), 0)
      }
      const times = fresh.map((r) => r.record.timestamp)
      plan.push({ partition, fromOffset: from, records: fresh.length, fromMs: Math.min(...times), toMs: Math.max(...times) })
    }
  }
  const all = plan.filter((w) => w.records > 0)
  const sampled = all.reduce((n, w) => n + w.records, 0)
  return {
    byPartition, records: sampled, bytes, windows: read,
    plan: {
      requestedRecords: records, windowsPerPartition: windows, partitions: offsets.length, windows: all, topicRecords,
      fromMs: Math.min(...all.map((w) => w.fromMs)), toMs: Math.max(...all.map((w) => w.toMs))
    }
  }
}

/** Records of one partition in offsets [from, until), fetched from its leader; aborted transactions left out. */
async function readRange(cluster: KafkajsCluster, topic: string, partition: number, from: number, until: number): Promise<Array<{ offset: number; record: SourceRecord }>> {
  const out: Array<{ offset: number; record: SourceRecord }> = []
  let at = from
  while (at < until) {
    const leader = cluster.findTopicPartitionMetadata(topic).find((p) => p.partitionId === partition)?.leader
    if (leader === undefined || leader < 0) throw new SqueezeError(ErrorCodes.SOURCE, `no leader known for ${topic}-${partition}`)
    const broker = await cluster.findBroker({ nodeId: leader })
    const { request, response } = fetchRequest({
      maxWaitMs: 100, minBytes: 1, maxBytes: 8 * 1024 * 1024, isolationLevel: ISOLATION.READ_COMMITTED,
      partitions: [{ topic, partition, offset: at, maxBytes: 1024 * 1024 }]
    })
    const [result] = (await broker.connectionPool.send({ request, response })) as FetchedPartition[]
    if (result === undefined) break
    if (result.errorCode !== KafkaErrorCode.NONE) throw new SqueezeError(ErrorCodes.SOURCE, `fetch from ${topic}-${partition} at offset ${at} failed: ${describeKafkaError(result.errorCode)}`)
    const batches = splitBatches(result.records)
    if (batches.length === 0) break
    const aborted = new AbortedTransactions(result.abortedTransactions)
    for (const bytes of batches) {
      const batch = readBatch(bytes, { fromOffset: at })
      const { isTransactional, isControl, producerId, lastOffset } = batch
      if (!aborted.skips({ isTransactional, isControl, producerId, lastOffset, isAbortMarker: isControl && isAbortMarker(bytes) }) && !isControl) {
        for (const r of batch.records) if (r.offset < until) out.push({ offset: r.offset, record: { key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp } })
      }
      at = Math.max(at, lastOffset + 1)
    }
  }
  return out
}
