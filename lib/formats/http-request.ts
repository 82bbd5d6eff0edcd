import { createRequire } from 'node:module'
import type CapnpTs from 'capnp-ts'

/**
 * The HttpRequest record of http-request.capnp, defined once in HTTP_REQUEST_SCHEMA below: the fast writer
 * (http-request-writer.ts), the capnp-ts reference writer and reader, the fast reader (http-request-reader.ts), the field type and the empty record
 * all take their fields from it. capnpc-ts would generate this, but crashes on enums and emits Int64 types the
 * 0.9 runtime no longer has. Offsets are the ones `capnp compile -ocapnp http-request.capnp` prints: scalar
 * offsets in bytes from the start of the 48-byte data section, text fields by index in the 14 pointers.
 * All defaults are zero, so no XOR masks are needed.
 */
export const HTTP_REQUEST_DATA_BYTES = 48
export const HTTP_REQUEST_POINTERS = 14

/** Enumerant names in ordinal order; the index is the wire value. */
export const HTTP_METHODS = ['UNKNOWN', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'CONNECT', 'TRACE', 'OTHER'] as const
export const SCHEMES = ['unknown', 'http', 'https'] as const
export const CACHE_STATUSES = ['unknown', 'hit', 'miss', 'expired', 'stale', 'bypass', 'dynamic', 'revalidated', 'updating'] as const
export const TLS_VERSIONS = ['none', 'TLSv1.0', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const

export type HttpMethod = (typeof HTTP_METHODS)[number]
export type Scheme = (typeof SCHEMES)[number]
export type CacheStatus = (typeof CACHE_STATUSES)[number]
export type TlsVersion = (typeof TLS_VERSIONS)[number]

export type HttpFieldKind = 'text' | 'u16' | 'u32' | 'u64' | 'f32' | 'enum'

interface HttpFieldSpec {
  readonly name: string
  readonly kind: HttpFieldKind
  /** Byte offset in the data section; for text, the pointer index. */
  readonly at: number
  /** For enums: enumerant names in ordinal order. */
  readonly names?: readonly string[]
}

/** Every field, in schema order (the order the writer allocates text in, which the golden bytes pin). */
export const HTTP_REQUEST_SCHEMA = [
  { name: 'timestampNs', kind: 'u64', at: 0 },
  { name: 'clientIp', kind: 'text', at: 0 },
  { name: 'clientPort', kind: 'u16', at: 8 },
  { name: 'method', kind: 'enum', at: 10, names: HTTP_METHODS },
  { name: 'scheme', kind: 'enum', at: 12, names: SCHEMES },
  { name: 'host', kind: 'text', at: 1 },
  { name: 'path', kind: 'text', at: 2 },
  { name: 'query', kind: 'text', at: 3 },
  { name: 'protocol', kind: 'text', at: 4 },
  { name: 'status', kind: 'u16', at: 14 },
  { name: 'requestBytes', kind: 'u64', at: 16 },
  { name: 'responseBytes', kind: 'u64', at: 24 },
  { name: 'userAgent', kind: 'text', at: 5 },
  { name: 'referer', kind: 'text', at: 6 },
  { name: 'contentType', kind: 'text', at: 7 },
  { name: 'cacheStatus', kind: 'enum', at: 32, names: CACHE_STATUSES },
  { name: 'tlsVersion', kind: 'enum', at: 34, names: TLS_VERSIONS },
  { name: 'originResponseTimeMs', kind: 'f32', at: 36 },
  { name: 'edgeTimeToFirstByteMs', kind: 'f32', at: 40 },
  { name: 'edgeLocation', kind: 'text', at: 8 },
  { name: 'requestId', kind: 'text', at: 9 },
  { name: 'rayId', kind: 'text', at: 10 },
  { name: 'country', kind: 'text', at: 11 },
  { name: 'asn', kind: 'u32', at: 44 },
  { name: 'remoteUser', kind: 'text', at: 12 },
  { name: 'ident', kind: 'text', at: 13 }
] as const satisfies readonly HttpFieldSpec[]

export type HttpRequestField = (typeof HTTP_REQUEST_SCHEMA)[number]

type FieldValue<F extends HttpRequestField> = F extends { readonly names: readonly (infer N)[] } ? N : F['kind'] extends 'text' ? string : F['kind'] extends 'u64' ? bigint : number

/** Plain-object view of one record; what readers return and writers take. */
export type HttpRequestFields = { -readonly [F in HttpRequestField as F['name']]: FieldValue<F> }

/** Number of schema fields; decode reports this many fields read. */
export const HTTP_REQUEST_FIELD_COUNT = HTTP_REQUEST_SCHEMA.length

function defaultLiteral(field: HttpRequestField): string {
  switch (field.kind) {
    case 'text': return "''"
    case 'u64': return '0n'
    case 'enum': return JSON.stringify(field.names[0])
    default: return '0'
  }
}

/**
 * A fresh record with every field at its default, compiled from the schema into one object literal: a parser
 * makes one per line, and spreading a frozen template was a tenth of the access-log parse in the profile.
 */
export const emptyHttpRequest = new Function(`return function emptyHttpRequest() {\n  return { ${HTTP_REQUEST_SCHEMA.map((field) => `${field.name}: ${defaultLiteral(field)}`).join(', ')} }\n}`)() as () => HttpRequestFields

/** Maps a request-line method to the enum; unlisted methods become OTHER rather than failing the line. */
export function methodFromString(method: string): HttpMethod {
  const i = (HTTP_METHODS as readonly string[]).indexOf(method)
  return i > 0 && i < HTTP_METHODS.length - 1 ? (HTTP_METHODS[i] as HttpMethod) : 'OTHER'
}

function ordinal(names: readonly string[], value: string): number {
  const i = names.indexOf(value)
  return i < 0 ? 0 : i
}

/** Enum lookup that maps unknown future ordinals to the zero enumerant instead of undefined. */
export function enumName<T extends string>(names: readonly T[], wire: number): T {
  return names[wire] ?? (names[0] as T)
}

type Capnp = typeof CapnpTs

interface Reference {
  readonly capnp: Capnp
  readonly HttpRequest: ReturnType<typeof httpRequestStruct>
}

function httpRequestStruct(capnp: Capnp) {
  return class HttpRequest extends capnp.Struct {
    static override readonly _capnp = {
      displayName: 'HttpRequest',
      id: 'ca1a0c389748766b',
      size: new capnp.ObjectSize(HTTP_REQUEST_DATA_BYTES, HTTP_REQUEST_POINTERS)
    }

    override toString(): string { return 'HttpRequest_' + super.toString() }
  }
}

let reference: Reference | undefined

/**
 * capnp-ts and the struct class, loaded the first time the reference writer or reader runs: the services
 * never write through it and read through it only for messages the fast reader does not handle, and its
 * sixty-odd modules were a tenth of every command's start-up.
 */
function capnpTs(): Reference {
  if (reference === undefined) {
    const capnp = createRequire(import.meta.url)('capnp-ts') as Capnp
    reference = { capnp, HttpRequest: httpRequestStruct(capnp) }
  }
  return reference
}

/**
 * Reference writer through capnp-ts, far slower than writeHttpRequest (http-request-writer.ts), which the
 * tests hold byte-identical to this one.
 */
export function writeHttpRequestViaCapnpTs(f: HttpRequestFields): Buffer {
  const { capnp, HttpRequest } = capnpTs()
  const message = new capnp.Message()
  const r = message.initRoot(HttpRequest)
  const values = f as unknown as Record<string, string | number | bigint>
  for (const field of HTTP_REQUEST_SCHEMA) {
    const value = values[field.name]
    switch (field.kind) {
      // Empty strings stay null pointers: smaller records, and readers treat null Text as "".
      case 'text': if ((value as string).length > 0) capnp.Struct.setText(field.at, value as string, r); break
      case 'u16': capnp.Struct.setUint16(field.at, value as number, r); break
      case 'u32': capnp.Struct.setUint32(field.at, value as number, r); break
      case 'u64': capnp.Struct.setUint64(field.at, value as bigint, r); break
      case 'f32': capnp.Struct.setFloat32(field.at, value as number, r); break
      case 'enum': capnp.Struct.setUint16(field.at, ordinal(field.names, value as string), r); break
    }
  }
  return Buffer.from(message.toArrayBuffer())
}

/**
 * Reference reader through capnp-ts. Slow (~20k records/s) but independent of the hand-rolled
 * fast reader, so tests cross-check the two. Callers must catch: capnp-ts throws plain Errors.
 */
export function readHttpRequestViaCapnpTs(value: Uint8Array): HttpRequestFields {
  const { capnp, HttpRequest } = capnpTs()
  const r = new capnp.Message(value, false).getRoot(HttpRequest)
  const fields = emptyHttpRequest()
  const values = fields as unknown as Record<string, string | number | bigint>
  for (const field of HTTP_REQUEST_SCHEMA) {
    switch (field.kind) {
      case 'text': values[field.name] = capnp.Struct.getText(field.at, r); break
      case 'u16': values[field.name] = capnp.Struct.getUint16(field.at, r); break
      case 'u32': values[field.name] = capnp.Struct.getUint32(field.at, r); break
      case 'u64': values[field.name] = capnp.Struct.getUint64(field.at, r); break
      case 'f32': values[field.name] = capnp.Struct.getFloat32(field.at, r); break
      case 'enum': values[field.name] = enumName(field.names, capnp.Struct.getUint16(field.at, r)); break
    }
  }
  return fields
}
