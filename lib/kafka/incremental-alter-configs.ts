import { ErrorCodes, SqueezeError } from '../errors.js'
import { describeKafkaError, KafkaErrorCode } from './error-codes.js'
import { Decoder, Encoder, type KafkajsCluster } from './kafkajs-internals.js'
import { ownRequest, type OwnRequest } from './own-request.js'

const INCREMENTAL_ALTER_CONFIGS_API_KEY = 44
// v0: non-flexible encoding, served by every broker since Kafka 2.3.
const INCREMENTAL_ALTER_CONFIGS_VERSION = 0
const RESOURCE_TYPE_TOPIC = 2
const OPERATION_SET = 0

export interface TopicConfigChange {
  readonly topic: string
  readonly configs: ReadonlyArray<{ readonly name: string; readonly value: string }>
}

interface ResourceResult {
  readonly errorCode: number
  readonly errorMessage: string | null
  readonly name: string
}

function request(change: TopicConfigChange, validateOnly: boolean): OwnRequest<ResourceResult[]> {
  return ownRequest(
    {
      apiKey: INCREMENTAL_ALTER_CONFIGS_API_KEY,
      apiVersion: INCREMENTAL_ALTER_CONFIGS_VERSION,
      apiName: 'IncrementalAlterConfigs'
    },
    {
      encode: () => {
        const encoder = new Encoder()
          .writeInt32(1)
          .writeInt8(RESOURCE_TYPE_TOPIC)
          .writeString(change.topic)
          .writeInt32(change.configs.length)
        for (const c of change.configs) encoder.writeString(c.name).writeInt8(OPERATION_SET).writeString(c.value)
        return encoder.writeInt8(validateOnly ? 1 : 0)
      },
      decode: (raw) => {
        const decoder = new Decoder(raw)
        decoder.readInt32() // throttle_time_ms
        const results: ResourceResult[] = []
        const count = decoder.readInt32()
        for (let i = 0; i < count; i++) {
          const errorCode = decoder.readInt16()
          const errorMessage = decoder.readString() as string | null
          decoder.readInt8() // resource_type
          results.push({ errorCode, errorMessage, name: decoder.readString() })
        }
        return results
      }
    }
  )
}

/**
 * Sets the topic's configs with IncrementalAlterConfigs (API 44), which changes only the named configs; the
 * older AlterConfigs (the only one kafkajs sends) would reset every other config of the topic. With
 * validateOnly the broker checks the change and applies nothing: the dry run.
 */
export async function alterTopicConfigs(
  cluster: KafkajsCluster,
  change: TopicConfigChange,
  validateOnly: boolean
): Promise<void> {
  await cluster.refreshMetadata()
  const broker = await cluster.findControllerBroker()
  const { request: req, response } = request(change, validateOnly)
  const results = await broker.connectionPool.send({ request: req, response })
  const failed = results.find((r) => r.errorCode !== KafkaErrorCode.NONE)
  if (results.length !== 1 || failed !== undefined) {
    const why =
      failed === undefined
        ? `${results.length} results for one topic`
        : `${describeKafkaError(failed.errorCode)}${failed.errorMessage === null ? '' : `: ${failed.errorMessage}`}`
    throw new SqueezeError(
      ErrorCodes.TOPIC_REFUSED,
      `the broker refused ${validateOnly ? 'to validate' : ''} the config change on ${change.topic}: ${why}`.replace(
        '  ',
        ' '
      )
    )
  }
}
