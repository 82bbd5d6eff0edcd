import { readBatch, splitBatches, type ReadBatch, type ReadOptions } from '../../lib/protocol/record-batch-reader.js'

/** Every whole batch of a fetched record set, decoded: what the tests compare a record set against. */
export function readBatches(data: Buffer, options: ReadOptions = {}): ReadBatch[] {
  return splitBatches(data).map((batch) => readBatch(batch, options))
}
