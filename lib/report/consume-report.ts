import type { TopicMeasurement } from '../consumer/measure-topics.js'
import { formatBytes, formatNumber, renderTable } from './table.js'

/** CPU seconds per GiB of uncompressed data: how a cost scales to a real topic's volume. */
function secondsPerGiB(seconds: number, bytes: number): number {
  return bytes === 0 ? Number.NaN : seconds / (bytes / 1024 ** 3)
}

export function renderConsumeReport(measurements: readonly TopicMeasurement[], baselineTopic?: string): string {
  const baseline = measurements.find((m) => m.topic === baselineTopic)
  const rows = measurements.map((m) => {
    const seconds = Math.max((m.lastReadAt - m.firstReadAt) / 1000, 1e-3)
    const ratio = m.storedBytes === 0 ? Number.NaN : m.uncompressedBytes / m.storedBytes
    const vsBaseline = baseline === undefined || m.storedBytes === 0 ? Number.NaN : baseline.storedBytes / m.storedBytes
    return [
      m.topic,
      m.codecs.join(',') || '-',
      String(m.records),
      String(m.batches),
      formatNumber(m.batches === 0 ? Number.NaN : m.records / m.batches, 0),
      formatBytes(m.uncompressedBytes),
      formatBytes(m.storedBytes),
      m.diskBytes === undefined ? '-' : formatBytes(m.diskBytes),
      `${formatNumber(ratio)}x`,
      ...(baseline === undefined ? [] : [`${formatNumber(vsBaseline)}x`]),
      formatNumber(secondsPerGiB(m.decompressCpuSeconds, m.uncompressedBytes)),
      formatNumber(secondsPerGiB(m.decodeCpuSeconds, m.uncompressedBytes)),
      formatNumber(m.records / seconds, 0),
      String(m.corruptRecords + m.corruptBatches)
    ]
  })
  const headers = ['topic', 'codec', 'records', 'batches', 'rec/batch', 'uncompressed', 'fetched', 'on disk (all replicas)', 'ratio',
    ...(baseline === undefined ? [] : ['vs none']), 'decompress cpu s/GiB', 'decode cpu s/GiB', 'records/s', 'corrupt']
  return renderTable(headers, rows)
}
