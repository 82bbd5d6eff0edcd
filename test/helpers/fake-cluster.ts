// A kafkajs cluster in memory for the producer's unit tests: it records every produce request, decodes the
// batches' producer fields and values, and answers only when the test says so (or at once, with autoRespond).
import type {
  KafkajsBroker,
  KafkajsCluster,
  PartitionMetadata,
  ProtocolRequest
} from '../../lib/kafka/kafkajs-internals.js'
import type { PartitionError } from '../../lib/kafka/offset-commit.js'
import type { PartitionProduceResult } from '../../lib/kafka/produce-request.js'
import { readBatch } from '../../lib/protocol/record-batch-reader.js'

const TXN_OFFSET_COMMIT_API_KEY = 28

export interface SentBatch {
  readonly topic: string
  readonly partition: number
  readonly producerId: bigint
  readonly producerEpoch: number
  readonly baseSequence: number
  readonly isTransactional: boolean
  readonly values: readonly string[]
}

export interface ProduceCall {
  readonly leader: number
  readonly transactionalId: string | null
  readonly batches: readonly SentBatch[]
  /** Answers every partition with `code` (0: written), or per `topic-partition` key. */
  respond(code?: number | Readonly<Record<string, number>>): void
  /** The connection fails: the producer cannot know whether the batches landed. */
  fail(err: Error): void
}

export interface CoordinatorCall {
  readonly api: 'addPartitionsToTxn' | 'addOffsetsToTxn' | 'txnOffsetCommit' | 'endTxn'
  readonly args: Record<string, unknown>
}

export interface FakeClusterOptions {
  /** Partition count per topic; every partition's leader is broker 1 unless `leaders` says otherwise. */
  readonly topics: Readonly<Record<string, number>>
  /** Answer every produce request with 0 at once. */
  readonly autoRespond?: boolean
}

export class FakeCluster implements KafkajsCluster {
  readonly calls: ProduceCall[] = []
  readonly coordinatorCalls: CoordinatorCall[] = []
  /** Values written per `topic-partition`, in log order, as a broker that stores each answered-0 batch. */
  readonly log = new Map<string, string[]>()
  /** Leader per `topic-partition`; -1 means no leader. */
  readonly leaders = new Map<string, number>()
  initProducerIdCalls: Array<{ transactionalId?: string; via: 'controller' | 'coordinator' }> = []
  /** The next calls of each coordinator API fail with these errors, one each. */
  readonly coordinatorErrors: Partial<Record<CoordinatorCall['api'], Error[]>> = {}
  /** The next TxnOffsetCommit calls are answered with this error code for the first partition, one each. */
  readonly txnOffsetCommitRefusals: number[] = []
  /** The next InitProducerId calls fail with these errors, one each. */
  initProducerIdErrors: Error[] = []
  autoRespond: boolean
  private readonly topics: Map<string, number>
  private nextProducerId = 1000n

  constructor(options: FakeClusterOptions) {
    this.topics = new Map(Object.entries(options.topics))
    this.autoRespond = options.autoRespond ?? false
  }

  async connect(): Promise<void> {}
  async disconnect(): Promise<void> {}
  isConnected(): boolean {
    return true
  }

  async addTargetTopic(): Promise<void> {}
  async addMultipleTargetTopics(): Promise<void> {}
  async refreshMetadata(): Promise<void> {}

  findTopicPartitionMetadata(topic: string): PartitionMetadata[] {
    const count = this.topics.get(topic) ?? 0
    return Array.from({ length: count }, (_, partitionId) => {
      const leader = this.leaders.get(`${topic}-${partitionId}`) ?? 1
      return { partitionId, leader, replicas: [leader], isr: [leader] }
    })
  }

  async findBroker(args: { nodeId: number }): Promise<KafkajsBroker> {
    return this.broker(args.nodeId, 'controller')
  }

  async findControllerBroker(): Promise<KafkajsBroker> {
    return this.broker(1, 'controller')
  }

  async findGroupCoordinator(): Promise<KafkajsBroker> {
    return this.broker(1, 'coordinator')
  }

  /** The produce calls still waiting for an answer. */
  pending(): ProduceCall[] {
    return this.calls.filter((call) => !answered.has(call))
  }

  private broker(nodeId: number, via: 'controller' | 'coordinator'): KafkajsBroker {
    const record =
      (api: CoordinatorCall['api']) =>
      async (args: Record<string, unknown>): Promise<unknown> => {
        this.coordinatorCalls.push({ api, args })
        const error = this.coordinatorErrors[api]?.shift()
        if (error !== undefined) throw error
        return {}
      }
    return {
      nodeId,
      isConnected: () => true,
      connectionPool: {
        send: async <T>(args: { request: ProtocolRequest }): Promise<T> => {
          if (args.request.apiKey === TXN_OFFSET_COMMIT_API_KEY) return (await this.txnOffsetCommit(args.request)) as T
          return (await this.produce(nodeId, args.request)) as T
        }
      },
      initProducerId: async (args) => {
        this.initProducerIdCalls.push({
          ...(args.transactionalId === undefined ? {} : { transactionalId: args.transactionalId }),
          via
        })
        const error = this.initProducerIdErrors.shift()
        if (error !== undefined) throw error
        return { producerId: String(this.nextProducerId++), producerEpoch: 0 }
      },
      addPartitionsToTxn: record('addPartitionsToTxn'),
      addOffsetsToTxn: record('addOffsetsToTxn'),
      endTxn: record('endTxn'),
      offsetCommit: async () => ({})
    }
  }

  /** squeeze's own TxnOffsetCommit: recorded with its body (after the header's tag byte); answers no errors unless told. */
  private async txnOffsetCommit(request: ProtocolRequest): Promise<PartitionError[]> {
    const encoded = await request.encode()
    if (!('buf' in encoded)) throw new Error("expected squeeze's own TxnOffsetCommit")
    this.coordinatorCalls.push({
      api: 'txnOffsetCommit',
      args: { version: request.apiVersion, body: encoded.buffer.subarray(1).toString('hex') }
    })
    const error = this.coordinatorErrors.txnOffsetCommit?.shift()
    if (error !== undefined) throw error
    const refusal = this.txnOffsetCommitRefusals.shift()
    return refusal === undefined ? [] : [{ topic: 'src', partition: 0, errorCode: refusal }]
  }

  private async produce(leader: number, request: ProtocolRequest): Promise<PartitionProduceResult[]> {
    const encoded = await request.encode()
    if (!('buf' in encoded)) throw new Error("the fake cluster reads only squeeze's own produce requests")
    const { transactionalId, batches } = parseProduceBody(encoded.buffer)
    return new Promise<PartitionProduceResult[]>((resolve, reject) => {
      const call: ProduceCall = {
        leader,
        transactionalId,
        batches,
        respond: (code = 0) => {
          answered.add(call)
          resolve(
            batches.map((b) => {
              const key = `${b.topic}-${b.partition}`
              const errorCode = typeof code === 'number' ? code : (code[key] ?? 0)
              const log = this.log.get(key) ?? []
              this.log.set(key, log)
              const baseOffset = errorCode === 0 ? log.length : -1
              if (errorCode === 0) log.push(...b.values)
              return { topic: b.topic, partition: b.partition, errorCode, baseOffset }
            })
          )
        },
        fail: (err) => {
          answered.add(call)
          reject(err)
        }
      }
      this.calls.push(call)
      if (this.autoRespond) call.respond(0)
    })
  }
}

const answered = new WeakSet<ProduceCall>()

/** Produce v7's body, as lib/kafka/produce-request.ts writes it. */
function parseProduceBody(body: Buffer): { transactionalId: string | null; batches: SentBatch[] } {
  let at = 0
  const txnLength = body.readInt16BE(at)
  at += 2
  const transactionalId = txnLength < 0 ? null : body.toString('utf8', at, at + txnLength)
  at += Math.max(txnLength, 0) + 2 + 4
  const batches: SentBatch[] = []
  const topics = body.readInt32BE(at)
  at += 4
  for (let t = 0; t < topics; t++) {
    const nameLength = body.readInt16BE(at)
    const topic = body.toString('utf8', at + 2, at + 2 + nameLength)
    at += 2 + nameLength
    const partitions = body.readInt32BE(at)
    at += 4
    for (let p = 0; p < partitions; p++) {
      const partition = body.readInt32BE(at)
      const size = body.readInt32BE(at + 4)
      // A copy: the producer may stamp the same batch again before resending it.
      const bytes = Buffer.from(body.subarray(at + 8, at + 8 + size))
      at += 8 + size
      const batch = readBatch(bytes, { verifyCrc: true })
      batches.push({
        topic,
        partition,
        producerId: batch.producerId,
        producerEpoch: bytes.readInt16BE(51),
        baseSequence: batch.baseSequence,
        isTransactional: batch.isTransactional,
        values: batch.records.map((r) => r.value?.toString() ?? '')
      })
    }
  }
  return { transactionalId, batches }
}

/** Waits until `condition` holds, polling each event-loop turn; rejects after `timeoutMs` with `what`. */
export async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

/** Lets every pending timer-free step run: the producer's drains run on setImmediate, its requests on promises. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve))
}
