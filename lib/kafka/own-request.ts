import type { EncodedPayload, KafkajsEncoder, ProtocolRequest, ProtocolResponse } from './kafkajs-internals.js'

/** A request of squeeze's own (one kafkajs lacks, or would decode too eagerly), ready for a kafkajs connection's send(). */
export interface OwnRequest<T> {
  readonly request: ProtocolRequest
  readonly response: ProtocolResponse<T>
}

export interface ApiVersion {
  readonly apiKey: number
  readonly apiVersion: number
  readonly apiName: string
}

/**
 * The framing every such request shares: kafkajs adds the header and size to what `encode` writes, and hands
 * the response body to `decode`; there is no separate parse step. A response is expected unless `expectResponse`
 * says otherwise (a Produce with acks 0).
 */
export function ownRequest<T>(
  api: ApiVersion,
  body: { encode(): KafkajsEncoder | EncodedPayload; decode(raw: Buffer): T; expectResponse?: () => boolean }
): OwnRequest<T> {
  return {
    request: { ...api, expectResponse: body.expectResponse ?? (() => true), encode: async () => body.encode() },
    response: { decode: async (raw) => body.decode(raw), parse: async (decoded) => decoded }
  }
}
