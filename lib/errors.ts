/**
 * Every error squeeze raises on purpose. Codes are stable (SQUEEZE_ERR_<AREA>_<WHAT>) so logs and
 * metrics can be grouped by them; `retriable` defaults to false because retrying a bad config or a
 * poison record forever is how pipelines end up in crash loops.
 */
export interface SqueezeErrorOptions {
  retriable?: boolean
  cause?: unknown
}

export class SqueezeError extends Error {
  readonly code: string
  readonly retriable: boolean

  constructor(code: string, message: string, options: SqueezeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'SqueezeError'
    this.code = code
    this.retriable = options.retriable ?? false
  }
}

export const ErrorCodes = {
  CONFIG_INVALID: 'SQUEEZE_ERR_CONFIG_INVALID',
  CODEC_UNKNOWN: 'SQUEEZE_ERR_CODEC_UNKNOWN',
  CODEC_LEVEL: 'SQUEEZE_ERR_CODEC_LEVEL',
  CODEC_CORRUPT: 'SQUEEZE_ERR_CODEC_CORRUPT',
  /** A compressed section that would inflate past the decompression cap (squeeze.max.batch.uncompressed.bytes). */
  CODEC_OUTPUT_LIMIT: 'SQUEEZE_ERR_CODEC_OUTPUT_LIMIT',
  RECORD_TOO_LARGE: 'SQUEEZE_ERR_RECORD_TOO_LARGE',
  RECORD_CORRUPT: 'SQUEEZE_ERR_RECORD_CORRUPT',
  RECORD_INVALID: 'SQUEEZE_ERR_RECORD_INVALID',
  BATCH_CORRUPT: 'SQUEEZE_ERR_BATCH_CORRUPT',
  /** A fetched batch whose length or offsets cannot be right: where the next batch starts is not known. */
  BATCH_FRAMING: 'SQUEEZE_ERR_BATCH_FRAMING',
  PARSE_LINE: 'SQUEEZE_ERR_PARSE_LINE',
  DECODE_RECORD: 'SQUEEZE_ERR_DECODE_RECORD',
  BROKER_UNREACHABLE: 'SQUEEZE_ERR_BROKER_UNREACHABLE',
  /** An address in --brokers answers, but not as a Kafka listener of the security protocol given (HTTP, TLS). */
  NOT_KAFKA: 'SQUEEZE_ERR_NOT_KAFKA',
  AUTH_FAILED: 'SQUEEZE_ERR_AUTH_FAILED',
  TLS_HANDSHAKE: 'SQUEEZE_ERR_TLS_HANDSHAKE',
  BROKER_START: 'SQUEEZE_ERR_BROKER_START',
  PRODUCE_FAILED: 'SQUEEZE_ERR_PRODUCE_FAILED',
  TOPIC_REFUSED: 'SQUEEZE_ERR_TOPIC_REFUSED',
  PRODUCER_CLOSED: 'SQUEEZE_ERR_PRODUCER_CLOSED',
  /** A poison record could not be written to its dead-letter topic: the consumer stops before committing past it. */
  DEAD_LETTER_FAILED: 'SQUEEZE_ERR_DEAD_LETTER_FAILED',
  TIMEOUT: 'SQUEEZE_ERR_TIMEOUT',
  SOURCE: 'SQUEEZE_ERR_SOURCE',
  GROUP: 'SQUEEZE_ERR_GROUP_MEMBERSHIP',
  /** An offset commit from a group member that no longer owns the partitions (KIP-447): abort, drop them, rejoin. */
  GROUP_FENCED: 'SQUEEZE_ERR_GROUP_FENCED',
  /** A run stopped where it stood by a deadline or an interrupt (the audit's --max-duration): it has no result. */
  RUN_CUT: 'SQUEEZE_ERR_RUN_CUT'
} as const

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes]

/** Classifies any thrown value; never throws, whatever it is handed (foreign errors, strings, null). */
export function isRetriable(err: unknown): boolean {
  if (err instanceof SqueezeError) return err.retriable
  if (typeof err === 'object' && err !== null && 'retriable' in err) {
    return (err as { retriable: unknown }).retriable === true
  }
  return false
}

// kafkajs raises these as not retriable, yet they only mean "the coordinator is still being elected or loaded".
const TRANSIENT_KAFKAJS_ERRORS = new Set([
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSConnectionError',
  'KafkaJSRequestTimeoutError'
])

/**
 * isRetriable, plus kafkajs's transient coordinator and connection errors: for start-up and coordinator calls.
 * kafkajs's own retries (a cluster's findGroupCoordinator) end in KafkaJSNumberOfRetriesExceeded, marked not
 * retriable whatever it wraps: a coordinator whose node was just killed is still named by the cluster for the
 * seconds until it is fenced, so its ECONNREFUSED arrives wrapped, and is as transient as unwrapped.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof Error && err.name === 'KafkaJSNumberOfRetriesExceeded')
    return err.cause !== err && isTransient(err.cause)
  return isRetriable(err) || (err instanceof Error && TRANSIENT_KAFKAJS_ERRORS.has(err.name))
}

export function errorCode(err: unknown): string {
  if (err instanceof SqueezeError) return err.code
  if (typeof err === 'object' && err !== null && 'type' in err && typeof (err as { type: unknown }).type === 'string') {
    return (err as { type: string }).type
  }
  return 'SQUEEZE_ERR_UNKNOWN'
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** The error a run stopped by `signal` rejects with: its reason when that is a RUN_CUT error, else one wrapping it. */
export function cutError(signal: AbortSignal): SqueezeError {
  const reason: unknown = signal.reason
  if (reason instanceof SqueezeError && reason.code === ErrorCodes.RUN_CUT) return reason
  return new SqueezeError(ErrorCodes.RUN_CUT, `cut: ${errorMessage(reason)}`, { cause: reason })
}

/** Throws cutError once `signal` is aborted; checked between the steps of a run that may be cut. */
export function throwIfCut(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw cutError(signal)
}

/**
 * A file squeeze was given and cannot read, said in the words an operator acts on: a directory wants a glob, a
 * missing file its path checked, a refused one a user who may read it.
 */
export function unreadableFile(path: string, err: unknown): SqueezeError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code
  const why =
    code === 'EISDIR'
      ? `${path} is a directory: give a file, or a glob such as ${path.replace(/\/+$/, '')}/*.log`
      : code === 'ENOENT'
        ? `${path} does not exist`
        : code === 'EACCES' || code === 'EPERM'
          ? `this user (uid ${process.getuid?.() ?? '?'}) may not read ${path}`
          : `cannot read ${path}: ${errorMessage(err)}`
  return new SqueezeError(ErrorCodes.SOURCE, why, { cause: err })
}
