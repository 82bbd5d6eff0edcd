import { encodedPayload, type ProtocolRequest, type ProtocolResponse } from './kafkajs-internals.js'

/**
 * Kafka's "flexible" encoding (KIP-482): compact strings and arrays with unsigned-varint lengths plus one,
 * and a tagged-field section after every struct. kafkajs 2.2.4 knows none of it; the group APIs of the new
 * consumer protocol exist only in flexible versions.
 */
export class FlexibleWriter {
  private readonly chunks: Buffer[] = []

  int8(value: number): this {
    return this.push(Buffer.of(value & 0xff))
  }

  bool(value: boolean): this {
    return this.int8(value ? 1 : 0)
  }

  int16(value: number): this {
    const b = Buffer.allocUnsafe(2)
    b.writeInt16BE(value)
    return this.push(b)
  }

  int32(value: number): this {
    const b = Buffer.allocUnsafe(4)
    b.writeInt32BE(value)
    return this.push(b)
  }

  int64(value: number | bigint): this {
    const b = Buffer.allocUnsafe(8)
    b.writeBigInt64BE(BigInt(value))
    return this.push(b)
  }

  uvarint(value: number): this {
    const bytes: number[] = []
    let v = value >>> 0
    while (v >= 0x80) {
      bytes.push((v & 0x7f) | 0x80)
      v >>>= 7
    }
    bytes.push(v)
    return this.push(Buffer.from(bytes))
  }

  compactString(value: string | null): this {
    if (value === null) return this.uvarint(0)
    const bytes = Buffer.from(value, 'utf8')
    return this.uvarint(bytes.length + 1).push(bytes)
  }

  compactArray<T>(items: readonly T[] | null, write: (item: T) => void): this {
    if (items === null) return this.uvarint(0)
    this.uvarint(items.length + 1)
    for (const item of items) write(item)
    return this
  }

  int32Array(items: readonly number[]): this {
    return this.compactArray(items, (n) => this.int32(n))
  }

  /** A topic id as Kafka prints it (base64url of its 16 bytes). */
  uuid(id: string): this {
    const bytes = Buffer.from(id, 'base64url')
    if (bytes.length !== 16) throw new RangeError(`not a Kafka uuid: ${id}`)
    return this.push(bytes)
  }

  /** squeeze sends no tagged fields: an empty section. */
  tags(): this {
    return this.uvarint(0)
  }

  build(): Buffer {
    return Buffer.concat(this.chunks)
  }

  private push(bytes: Buffer): this {
    this.chunks.push(bytes)
    return this
  }
}

export class FlexibleReader {
  offset = 0

  constructor(private readonly buf: Buffer) {}

  int8(): number {
    const v = this.buf.readInt8(this.offset)
    this.offset += 1
    return v
  }

  bool(): boolean {
    return this.int8() !== 0
  }

  int16(): number {
    const v = this.buf.readInt16BE(this.offset)
    this.offset += 2
    return v
  }

  int32(): number {
    const v = this.buf.readInt32BE(this.offset)
    this.offset += 4
    return v
  }

  int64(): number {
    const v = this.buf.readBigInt64BE(this.offset)
    this.offset += 8
    return Number(v)
  }

  uvarint(): number {
    let value = 0
    let shift = 0
    for (;;) {
      const byte = this.buf.readUInt8(this.offset++)
      value += (byte & 0x7f) * 2 ** shift
      if ((byte & 0x80) === 0) return value
      shift += 7
      if (shift > 28) throw new RangeError('unsigned varint longer than 5 bytes')
    }
  }

  compactString(): string | null {
    const length = this.uvarint() - 1
    if (length < 0) return null
    const value = this.buf.toString('utf8', this.offset, this.offset + length)
    this.offset += length
    return value
  }

  compactArray<T>(read: () => T): T[] | null {
    const length = this.uvarint() - 1
    if (length < 0) return null
    const items: T[] = []
    for (let i = 0; i < length; i++) items.push(read())
    return items
  }

  int32Array(): number[] {
    return this.compactArray(() => this.int32()) ?? []
  }

  uuid(): string {
    const id = this.buf.subarray(this.offset, this.offset + 16).toString('base64url')
    this.offset += 16
    return id
  }

  /** Skips a tagged-field section: squeeze reads none of the optional fields brokers may add. */
  tags(): void {
    const count = this.uvarint()
    for (let i = 0; i < count; i++) {
      this.uvarint() // tag
      this.offset += this.uvarint()
    }
  }
}

/**
 * A request in a flexible version, sent through kafkajs's connection. kafkajs frames request header v1
 * (api key, version, correlation id, client id); header v2 only adds an empty tagged-field section after the
 * client id, so the body starts with that byte. On the way back kafkajs strips the correlation id and hands
 * over the rest, which starts with response header v1's tagged fields.
 */
export function flexibleRequest<T>(
  apiKey: number,
  apiVersion: number,
  apiName: string,
  body: Buffer,
  decode: (reader: FlexibleReader) => T
): { request: ProtocolRequest; response: ProtocolResponse<T> } {
  const request: ProtocolRequest = {
    apiKey,
    apiVersion,
    apiName,
    expectResponse: () => true,
    encode: async () => encodedPayload(Buffer.concat([Buffer.of(0), body]))
  }
  const response: ProtocolResponse<T> = {
    decode: async (raw) => {
      const reader = new FlexibleReader(raw)
      reader.tags()
      return decode(reader)
    },
    parse: async (decoded) => decoded
  }
  return { request, response }
}
