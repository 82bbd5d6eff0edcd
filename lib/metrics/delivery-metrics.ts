import { Counter, Gauge, type Registry } from './prom-client.js'

/** Whether records are getting through: what /readyz answers, as metrics to alert on. */
export interface DeliveryMetrics {
  unrecoverable(topic: string, error: string): void
  blocked(blocked: boolean): void
}

export function createDeliveryMetrics(registry: Registry): DeliveryMetrics {
  const unrecoverable = new Counter({
    name: 'squeeze_produce_unrecoverable_errors_total',
    help: 'Batches the broker refused for a reason no retry fixes (INVALID_TIMESTAMP, TOPIC_AUTHORIZATION_FAILED, ...), by Kafka error',
    labelNames: ['topic', 'error'],
    registers: [registry]
  })
  const blocked = new Gauge({
    name: 'squeeze_producer_delivery_blocked',
    help: '1 from a batch refused for a reason no retry fixes until a batch is acknowledged again (then /readyz answers 503)',
    registers: [registry]
  })
  blocked.set(0)
  return {
    unrecoverable(topic, error) {
      unrecoverable.inc({ topic, error })
    },
    blocked(value) {
      blocked.set(value ? 1 : 0)
    }
  }
}
