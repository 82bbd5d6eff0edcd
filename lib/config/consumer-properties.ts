import { z } from 'zod'
import { ErrorCodes, SqueezeError } from '../errors.js'
import { validateConfig } from './validate.js'

const int = (min: number, max: number) =>
  z.coerce.number({ invalid_type_error: 'must be a number' }).int('must be a whole number').min(min).max(max)

/** Consumer settings under the Java client's names, as given with -X name=value (consume --group). */
const consumerPropertiesSchema = z
  .object({
    // Unset: `consumer` (KIP-848) when the group coordinator serves ConsumerGroupHeartbeat, else `classic`.
    'group.protocol': z.enum(['consumer', 'classic']),
    'auto.commit.interval.ms': int(10, 3_600_000),
    // The rebalance timeout: how long a member may take to give up revoked partitions.
    'max.poll.interval.ms': int(1000, 3_600_000),
    // Classic protocol only: KIP-848 session timeouts and heartbeat intervals are the broker's (group.consumer.*).
    'session.timeout.ms': int(1000, 3_600_000),
    'heartbeat.interval.ms': int(100, 3_600_000)
  })
  .partial()
  .strict()

export type ConsumerProperties = z.infer<typeof consumerPropertiesSchema>

export function consumerPropertiesFrom(properties: Record<string, string>): ConsumerProperties {
  return validateConfig(consumerPropertiesSchema, properties, 'consumer settings')
}

/** The group settings a copier takes with -X beside its producer settings; the other consumer ones have flags there. */
const COPIER_GROUP_PROPERTIES = new Set(['group.protocol', 'max.poll.interval.ms'])
const COPIER_FLAGS: Readonly<Record<string, string>> = {
  'auto.commit.interval.ms': '--commit-interval-ms',
  'session.timeout.ms': '--session-timeout-ms'
}

/** Splits a copier's -X settings into its group settings (validated) and the rest, for the producer. */
export function copierGroupProperties(properties: Record<string, string>): {
  group: ConsumerProperties
  producer: Record<string, string>
} {
  const group: Record<string, string> = {}
  const producer: Record<string, string> = {}
  for (const [name, value] of Object.entries(properties)) {
    const flag = COPIER_FLAGS[name]
    if (flag !== undefined)
      throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `-X ${name}: the copier sets it with ${flag}`)
    if (COPIER_GROUP_PROPERTIES.has(name)) group[name] = value
    else producer[name] = value
  }
  return { group: consumerPropertiesFrom(group), producer }
}
