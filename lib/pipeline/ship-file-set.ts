import type { Admin } from 'kafkajs'
import { formatFor, type LogKind } from '../formats/index.js'
import { createCluster, createKafkaClient, type KafkaConnectionConfig } from '../kafka/connection.js'
import type { Logger } from '../log/logger.js'
import type { SourceMetrics } from '../metrics/source-metrics.js'
import type { Producer } from '../producer/producer.js'
import { CRI_KIND, FileSet, type FilePattern, type FilePosition } from '../sources/file-set.js'
import { KafkaPositions } from '../sources/kafka-positions.js'
import { PositionStore } from '../sources/position-store.js'
import type { ParseErrorPolicy, ProduceLogsSummary } from './produce-logs.js'
import { shipFiles } from './ship-files.js'

/** Where a file set's read positions are kept: a state file, the positions topic (exactly once), or nowhere. */
export type PositionsPlace =
  | { readonly kind: 'state-dir'; readonly dir: string }
  | { readonly kind: 'topic'; readonly topic: string; readonly transactionalId: string }
  | { readonly kind: 'none' }

export interface ShipFileSetArgs {
  readonly patterns: readonly FilePattern[]
  readonly exclude: readonly string[]
  readonly follow: boolean
  /** The file set's id: its state file's and its positions' key. */
  readonly fileSet: string
  readonly positions: PositionsPlace
  /** Header values each record carries: the file it came from (unless false), and the host name (if given). */
  readonly headers: { readonly file: boolean; readonly host: string | null }
  readonly connection: KafkaConnectionConfig
  readonly topic: string
  readonly producer: Producer
  readonly log: Logger
  readonly signal: AbortSignal
  readonly lines: { readonly maxLineBytes: number; readonly onLineSplit: () => void }
  readonly onParseError: ParseErrorPolicy
  readonly metrics: SourceMetrics
  /** Settles once the producer takes records. */
  readonly ready: Promise<unknown>
}

/**
 * Followed files or a file set, with their read positions in the state directory, or with exactly once in the
 * positions topic, read once the producer's InitProducerId has ended what a previous instance left open.
 */
export async function shipFileSet(args: ShipFileSetArgs): Promise<ProduceLogsSummary> {
  const { log, positions } = args
  const kafkaPositions = positions.kind === 'topic' ? new KafkaPositions(positions.topic, args.fileSet) : null
  const store = positions.kind === 'state-dir' ? new PositionStore(positions.dir, args.fileSet) : null
  const saved = kafkaPositions !== null ? await loadFromTopic(args, kafkaPositions) : ((await store?.load()) ?? [])
  await store?.saveLoaded(saved)
  const state = kafkaPositions?.topic ?? store?.path ?? null
  const transactionalId = positions.kind === 'topic' ? positions.transactionalId : null
  log.info({ files: args.patterns, state, transactionalId, positions: saved.length }, 'shipping a file set')
  let compressedFiles = 0
  const files = new FileSet({
    patterns: args.patterns,
    exclude: args.exclude,
    follow: args.follow,
    ...args.lines,
    saved,
    log,
    signal: args.signal,
    onLost: () => args.metrics.lostFile(),
    onCompressedFile: (_path, format) => {
      compressedFiles++
      args.metrics.compressedFile(format)
    }
  })
  const summary = await shipFiles({
    files,
    topic: args.topic,
    producer: args.producer,
    onParseError: args.onParseError,
    formatFor: (kind) => (kind === CRI_KIND ? null : formatFor(kind as LogKind)),
    headers: args.headers,
    positions: store,
    // Exactly once: a failed record aborts its transaction and ends the run instead.
    resend: args.follow && kafkaPositions === null,
    ...(kafkaPositions === null ? {} : { transactional: kafkaPositions }),
    saved,
    checkpointMs: 1000,
    log,
    metrics: args.metrics,
    ready: args.ready
  })
  return { ...summary, compressedFilesSkipped: compressedFiles }
}

/** The positions the topic holds for this file set, once the producer is ready (its InitProducerId fenced the last). */
async function loadFromTopic(args: ShipFileSetArgs, positions: KafkaPositions): Promise<FilePosition[]> {
  await args.ready
  return withAdmin(args.connection, args.log, async (admin) => {
    await positions.ensureTopic(admin)
    const cluster = createCluster(args.connection, args.log)
    await cluster.connect()
    try {
      return await positions.load({ cluster, admin, log: args.log })
    } finally {
      await cluster.disconnect()
    }
  })
}

async function withAdmin<T>(
  connection: KafkaConnectionConfig,
  log: Logger,
  run: (admin: Admin) => Promise<T>
): Promise<T> {
  const admin = createKafkaClient(connection, log).admin()
  await admin.connect()
  try {
    return await run(admin)
  } finally {
    await admin.disconnect()
  }
}
