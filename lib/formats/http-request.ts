import capnp from 'capnp-ts'

/**
 * Hand-written capnp-ts accessor for `HttpRequest` in http-request.capnp, in the style capnpc-ts
 * would generate (capnpc-ts crashes on enums and emits Int64 types the 0.9 runtime no longer has).
 * Offsets are the ones `capnp compile -ocapnp http-request.capnp` prints; data offsets below are
 * in bytes from the start of the data section, pointer indexes count from the pointer section.
 *
 *   data (48 bytes = 6 words)                 pointers (14)
 *    0 timestampNs           UInt64            0 clientIp      7 contentType
 *    8 clientPort            UInt16            1 host          8 edgeLocation
 *   10 method                UInt16 (enum)     2 path          9 requestId
 *   12 scheme                UInt16 (enum)     3 query        10 rayId
 *   14 status                UInt16            4 protocol     11 country
 *   16 requestBytes          UInt64            5 userAgent    12 remoteUser
 *   24 responseBytes         UInt64            6 referer      13 ident
 *   32 cacheStatus           UInt16 (enum)
 *   34 tlsVersion            UInt16 (enum)
 *   36 originResponseTimeMs  Float32
 *   40 edgeTimeToFirstByteMs Float32
 *   44 asn                   UInt32
 *
 * All defaults are zero, so no XOR masks are needed.
 */
export const HTTP_REQUEST_DATA_BYTES = 48
export const HTTP_REQUEST_POINTERS = 14

export const HttpRequestOffsets = {
  timestampNs: 0,
  clientPort: 8,
  method: 10,
  scheme: 12,
  status: 14,
  requestBytes: 16,
  responseBytes: 24,
  cacheStatus: 32,
  tlsVersion: 34,
  originResponseTimeMs: 36,
  edgeTimeToFirstByteMs: 40,
  asn: 44
} as const

export const HttpRequestPointers = {
  clientIp: 0,
  host: 1,
  path: 2,
  query: 3,
  protocol: 4,
  userAgent: 5,
  referer: 6,
  contentType: 7,
  edgeLocation: 8,
  requestId: 9,
  rayId: 10,
  country: 11,
  remoteUser: 12,
  ident: 13
} as const

/** Enumerant names in ordinal order; the index is the wire value. */
export const HTTP_METHODS = ['UNKNOWN', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'CONNECT', 'TRACE', 'OTHER'] as const
export const SCHEMES = ['unknown', 'http', 'https'] as const
export const CACHE_STATUSES = ['unknown', 'hit', 'miss', 'expired', 'stale', 'bypass', 'dynamic', 'revalidated', 'updating'] as const
export const TLS_VERSIONS = ['none', 'TLSv1.0', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const

export type HttpMethod = (typeof HTTP_METHODS)[number]
export type Scheme = (typeof SCHEMES)[number]
export type CacheStatus = (typeof CACHE_STATUSES)[number]
export type TlsVersion = (typeof TLS_VERSIONS)[number]

/** Plain-object view of one record; what readers return and writers take. */
export interface HttpRequestFields {
  timestampNs: bigint
  clientIp: string
  clientPort: number
  method: HttpMethod
  scheme: Scheme
  host: string
  path: string
  query: string
  protocol: string
  status: number
  requestBytes: bigint
  responseBytes: bigint
  userAgent: string
  referer: string
  contentType: string
  cacheStatus: CacheStatus
  tlsVersion: TlsVersion
  originResponseTimeMs: number
  edgeTimeToFirstByteMs: number
  edgeLocation: string
  requestId: string
  rayId: string
  country: string
  asn: number
  remoteUser: string
  ident: string
}

/** Number of schema fields; decode reports this many fields read. */
export const HTTP_REQUEST_FIELD_COUNT = 26

export function emptyHttpRequest(): HttpRequestFields {
  return {
    timestampNs: 0n,
    clientIp: '',
    clientPort: 0,
    method: 'UNKNOWN',
    scheme: 'unknown',
    host: '',
    path: '',
    query: '',
    protocol: '',
    status: 0,
    requestBytes: 0n,
    responseBytes: 0n,
    userAgent: '',
    referer: '',
    contentType: '',
    cacheStatus: 'unknown',
    tlsVersion: 'none',
    originResponseTimeMs: 0,
    edgeTimeToFirstByteMs: 0,
    edgeLocation: '',
    requestId: '',
    rayId: '',
    country: '',
    asn: 0,
    remoteUser: '',
    ident: ''
  }
}

/** Maps a request-line method to the enum; unlisted methods become OTHER rather than failing the line. */
export function methodFromString(method: string): HttpMethod {
  const i = (HTTP_METHODS as readonly string[]).indexOf(method)
  return i > 0 && i < HTTP_METHODS.length - 1 ? (HTTP_METHODS[i] as HttpMethod) : 'OTHER'
}

function ordinal<T extends string>(names: readonly T[], value: T): number {
  const i = names.indexOf(value)
  return i < 0 ? 0 : i
}

/** Enum lookup that maps unknown future ordinals to the zero enumerant instead of undefined. */
export function enumName<T extends string>(names: readonly T[], wire: number): T {
  return names[wire] ?? (names[0] as T)
}

const O = HttpRequestOffsets
const P = HttpRequestPointers

export class HttpRequest extends capnp.Struct {
  static override readonly _capnp = {
    displayName: 'HttpRequest',
    id: 'ca1a0c389748766b',
    size: new capnp.ObjectSize(HTTP_REQUEST_DATA_BYTES, HTTP_REQUEST_POINTERS)
  }

  getTimestampNs(): bigint { return capnp.Struct.getUint64(O.timestampNs, this) }
  setTimestampNs(value: bigint): void { capnp.Struct.setUint64(O.timestampNs, value, this) }
  getClientIp(): string { return capnp.Struct.getText(P.clientIp, this) }
  setClientIp(value: string): void { capnp.Struct.setText(P.clientIp, value, this) }
  getClientPort(): number { return capnp.Struct.getUint16(O.clientPort, this) }
  setClientPort(value: number): void { capnp.Struct.setUint16(O.clientPort, value, this) }
  getMethod(): number { return capnp.Struct.getUint16(O.method, this) }
  setMethod(value: number): void { capnp.Struct.setUint16(O.method, value, this) }
  getScheme(): number { return capnp.Struct.getUint16(O.scheme, this) }
  setScheme(value: number): void { capnp.Struct.setUint16(O.scheme, value, this) }
  getHost(): string { return capnp.Struct.getText(P.host, this) }
  setHost(value: string): void { capnp.Struct.setText(P.host, value, this) }
  getPath(): string { return capnp.Struct.getText(P.path, this) }
  setPath(value: string): void { capnp.Struct.setText(P.path, value, this) }
  getQuery(): string { return capnp.Struct.getText(P.query, this) }
  setQuery(value: string): void { capnp.Struct.setText(P.query, value, this) }
  getProtocol(): string { return capnp.Struct.getText(P.protocol, this) }
  setProtocol(value: string): void { capnp.Struct.setText(P.protocol, value, this) }
  getStatus(): number { return capnp.Struct.getUint16(O.status, this) }
  setStatus(value: number): void { capnp.Struct.setUint16(O.status, value, this) }
  getRequestBytes(): bigint { return capnp.Struct.getUint64(O.requestBytes, this) }
  setRequestBytes(value: bigint): void { capnp.Struct.setUint64(O.requestBytes, value, this) }
  getResponseBytes(): bigint { return capnp.Struct.getUint64(O.responseBytes, this) }
  setResponseBytes(value: bigint): void { capnp.Struct.setUint64(O.responseBytes, value, this) }
  getUserAgent(): string { return capnp.Struct.getText(P.userAgent, this) }
  setUserAgent(value: string): void { capnp.Struct.setText(P.userAgent, value, this) }
  getReferer(): string { return capnp.Struct.getText(P.referer, this) }
  setReferer(value: string): void { capnp.Struct.setText(P.referer, value, this) }
  getContentType(): string { return capnp.Struct.getText(P.contentType, this) }
  setContentType(value: string): void { capnp.Struct.setText(P.contentType, value, this) }
  getCacheStatus(): number { return capnp.Struct.getUint16(O.cacheStatus, this) }
  setCacheStatus(value: number): void { capnp.Struct.setUint16(O.cacheStatus, value, this) }
  getTlsVersion(): number { return capnp.Struct.getUint16(O.tlsVersion, this) }
  setTlsVersion(value: number): void { capnp.Struct.setUint16(O.tlsVersion, value, this) }
  getOriginResponseTimeMs(): number { return capnp.Struct.getFloat32(O.originResponseTimeMs, this) }
  setOriginResponseTimeMs(value: number): void { capnp.Struct.setFloat32(O.originResponseTimeMs, value, this) }
  getEdgeTimeToFirstByteMs(): number { return capnp.Struct.getFloat32(O.edgeTimeToFirstByteMs, this) }
  setEdgeTimeToFirstByteMs(value: number): void { capnp.Struct.setFloat32(O.edgeTimeToFirstByteMs, value, this) }
  getEdgeLocation(): string { return capnp.Struct.getText(P.edgeLocation, this) }
  setEdgeLocation(value: string): void { capnp.Struct.setText(P.edgeLocation, value, this) }
  getRequestId(): string { return capnp.Struct.getText(P.requestId, this) }
  setRequestId(value: string): void { capnp.Struct.setText(P.requestId, value, this) }
  getRayId(): string { return capnp.Struct.getText(P.rayId, this) }
  setRayId(value: string): void { capnp.Struct.setText(P.rayId, value, this) }
  getCountry(): string { return capnp.Struct.getText(P.country, this) }
  setCountry(value: string): void { capnp.Struct.setText(P.country, value, this) }
  getAsn(): number { return capnp.Struct.getUint32(O.asn, this) }
  setAsn(value: number): void { capnp.Struct.setUint32(O.asn, value, this) }
  getRemoteUser(): string { return capnp.Struct.getText(P.remoteUser, this) }
  setRemoteUser(value: string): void { capnp.Struct.setText(P.remoteUser, value, this) }
  getIdent(): string { return capnp.Struct.getText(P.ident, this) }
  setIdent(value: string): void { capnp.Struct.setText(P.ident, value, this) }

  override toString(): string { return 'HttpRequest_' + super.toString() }
}

// Empty strings stay null pointers: smaller records, and readers treat null Text as "".
function setTextIfAny(s: HttpRequest, index: number, value: string): void {
  if (value.length > 0) capnp.Struct.setText(index, value, s)
}

/** Serialises one record as a standard framed, unpacked, single-segment Cap'n Proto message. */
export function writeHttpRequest(f: HttpRequestFields): Buffer {
  const message = new capnp.Message()
  const r = message.initRoot(HttpRequest)
  r.setTimestampNs(f.timestampNs)
  setTextIfAny(r, P.clientIp, f.clientIp)
  r.setClientPort(f.clientPort)
  r.setMethod(ordinal(HTTP_METHODS, f.method))
  r.setScheme(ordinal(SCHEMES, f.scheme))
  setTextIfAny(r, P.host, f.host)
  setTextIfAny(r, P.path, f.path)
  setTextIfAny(r, P.query, f.query)
  setTextIfAny(r, P.protocol, f.protocol)
  r.setStatus(f.status)
  r.setRequestBytes(f.requestBytes)
  r.setResponseBytes(f.responseBytes)
  setTextIfAny(r, P.userAgent, f.userAgent)
  setTextIfAny(r, P.referer, f.referer)
  setTextIfAny(r, P.contentType, f.contentType)
  r.setCacheStatus(ordinal(CACHE_STATUSES, f.cacheStatus))
  r.setTlsVersion(ordinal(TLS_VERSIONS, f.tlsVersion))
  r.setOriginResponseTimeMs(f.originResponseTimeMs)
  r.setEdgeTimeToFirstByteMs(f.edgeTimeToFirstByteMs)
  setTextIfAny(r, P.edgeLocation, f.edgeLocation)
  setTextIfAny(r, P.requestId, f.requestId)
  setTextIfAny(r, P.rayId, f.rayId)
  setTextIfAny(r, P.country, f.country)
  r.setAsn(f.asn)
  setTextIfAny(r, P.remoteUser, f.remoteUser)
  setTextIfAny(r, P.ident, f.ident)
  return Buffer.from(message.toArrayBuffer())
}

/**
 * Reference reader through capnp-ts. Slow (~20k records/s) but independent of the hand-rolled
 * fast reader, so tests cross-check the two. Callers must catch: capnp-ts throws plain Errors.
 */
export function readHttpRequestViaCapnpTs(value: Uint8Array): HttpRequestFields {
  const r = new capnp.Message(value, false).getRoot(HttpRequest)
  return {
    timestampNs: r.getTimestampNs(),
    clientIp: r.getClientIp(),
    clientPort: r.getClientPort(),
    method: enumName(HTTP_METHODS, r.getMethod()),
    scheme: enumName(SCHEMES, r.getScheme()),
    host: r.getHost(),
    path: r.getPath(),
    query: r.getQuery(),
    protocol: r.getProtocol(),
    status: r.getStatus(),
    requestBytes: r.getRequestBytes(),
    responseBytes: r.getResponseBytes(),
    userAgent: r.getUserAgent(),
    referer: r.getReferer(),
    contentType: r.getContentType(),
    cacheStatus: enumName(CACHE_STATUSES, r.getCacheStatus()),
    tlsVersion: enumName(TLS_VERSIONS, r.getTlsVersion()),
    originResponseTimeMs: r.getOriginResponseTimeMs(),
    edgeTimeToFirstByteMs: r.getEdgeTimeToFirstByteMs(),
    edgeLocation: r.getEdgeLocation(),
    requestId: r.getRequestId(),
    rayId: r.getRayId(),
    country: r.getCountry(),
    asn: r.getAsn(),
    remoteUser: r.getRemoteUser(),
    ident: r.getIdent()
  }
}
