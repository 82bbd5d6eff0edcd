import { ErrorCodes, errorCode, type SqueezeError } from '../errors.js'
import type { Logger } from '../log/logger.js'
import type { DeliveryMetrics } from '../metrics/delivery-metrics.js'
import type { AckedBatch, DeliveryFailure } from '../producer/producer.js'

/**
 * A batch the broker refused with an error the producer does not retry (INVALID_TIMESTAMP, an authorization
 * failure, …): the next batch meets the same refusal, so the service is not doing its job. Timeouts (an outage
 * that may end) and a single record too large for the topic (a bad record, counted) are not such errors.
 */
export function isUnrecoverable(error: SqueezeError): boolean {
  return error.code === ErrorCodes.PRODUCE_FAILED
}

export interface DeliveryHealth {
  /** False from an unrecoverable failure until a batch is acknowledged again. */
  healthy(): boolean
  /** Counts a refusal met before any batch was sent (the topic could not be created) as an unrecoverable error. */
  refused(topic: string, error: SqueezeError): void
}

interface DeliveryEvents {
  onDeliveryFailure(handler: (failure: DeliveryFailure) => void): void
  onBatchAcked(handler: (batch: AckedBatch) => void): void
}

/** Follows a producer's outcomes, so /readyz and the metrics say when records stop getting through. */
export function watchDelivery(
  producer: DeliveryEvents,
  deps: { metrics: DeliveryMetrics; log: Logger }
): DeliveryHealth {
  let blocked = false
  const block = (topic: string, error: SqueezeError): void => {
    // The Kafka error (INVALID_TIMESTAMP…) when the broker refused; squeeze's own code otherwise.
    deps.metrics.unrecoverable(topic, error.cause === undefined ? error.code : errorCode(error.cause))
    if (!blocked)
      deps.log.error(
        { topic, code: error.code },
        'records cannot be delivered until this is fixed; /readyz now answers 503'
      )
    blocked = true
    deps.metrics.blocked(true)
  }
  producer.onDeliveryFailure(({ topic, error }) => {
    if (isUnrecoverable(error)) block(topic, error)
  })
  producer.onBatchAcked(() => {
    if (!blocked) return
    blocked = false
    deps.metrics.blocked(false)
    deps.log.info('a batch was acknowledged again; /readyz answers 200')
  })
  return { healthy: () => !blocked, refused: block }
}
