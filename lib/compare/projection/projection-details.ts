import type { SamplingPlan } from './sample-windows.js'

/** How a read-only projection was made, and what its batching what-if found; part of the compare report. */
export interface ProjectionDetails {
  /** Threads the targets were compressed on. */
  readonly threads: number
  /** Mean time a batch's first record waited before its batch closed, at the run's linger.ms and batch.size. */
  readonly meanLingerUsedMs: number
  /** Each target's ratio with a 95% bootstrap interval over batches (how much the ratio depends on which batches were read). */
  readonly intervals: readonly RatioInterval[]
  /** --sample: the windows read; null when the topic was read from its start. */
  readonly sampling: SamplingPlan | null
  /** The --linger-ms x --batch-size what-if; null when not asked for. */
  readonly sweep: BatchingSweep | null
}

export interface RatioInterval {
  readonly target: string
  readonly ratio: number
  readonly low: number
  readonly high: number
}

export interface SweepCell {
  readonly target: string
  readonly lingerMs: number
  readonly batchSizeBytes: number
  readonly ratio: number
  readonly batches: number
  readonly meanRecordsPerBatch: number
  /** The latency the batching adds: mean wait of each batch's first record (at most linger.ms). */
  readonly meanLingerUsedMs: number
}

/**
 * Per linger.ms: the batch.size past which batches stop growing (the next size holds under 2% more records
 * per batch), so a larger batch.size cannot raise the ratio; null when they grew up to the largest size tried.
 * Batching happens before compression, so this is the same for every target.
 */
export interface GrowthStop {
  readonly lingerMs: number
  readonly batchSizeBytes: number | null
}

/** Raising linger.ms to `toLingerMs` takes the ratio from `fromRatio` to `toRatio`, at `addedLatencyMs` mean wait. */
export interface LingerAdvice {
  readonly target: string
  readonly batchSizeBytes: number
  readonly fromLingerMs: number
  readonly toLingerMs: number
  readonly fromRatio: number
  readonly toRatio: number
  readonly addedLatencyMs: number
}

export interface BatchingSweep {
  readonly lingerMs: readonly number[]
  readonly batchSizeBytes: readonly number[]
  readonly cells: readonly SweepCell[]
  readonly growthStops: readonly GrowthStop[]
  readonly advice: LingerAdvice | null
}
