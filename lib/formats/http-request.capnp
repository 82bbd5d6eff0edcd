# One HTTP request as seen by a CDN edge, the record value of the `http` log kind.
#
# The TypeScript accessor in http-request.ts is hand-written (capnpc-ts cannot compile this file
# for the capnp-ts 0.9 runtime), so it hard-codes the offsets `capnp compile -ocapnp` prints for
# this file. Adding a field is fine (append with the next ordinal); renumbering or retyping an
# existing field silently breaks every stored record and the hand-written offsets.
@0xb6f1d8e0c3a4f215;

struct HttpRequest {
  timestampNs @0 :UInt64;           # unix epoch nanoseconds when the request arrived
  clientIp @1 :Text;
  clientPort @2 :UInt16;
  method @3 :Method;
  scheme @4 :Scheme;
  host @5 :Text;
  path @6 :Text;                    # without the query string
  query @7 :Text;                   # without the leading '?'
  protocol @8 :Text;                # e.g. "HTTP/1.1", "HTTP/2"
  status @9 :UInt16;
  requestBytes @10 :UInt64;
  responseBytes @11 :UInt64;
  userAgent @12 :Text;
  referer @13 :Text;
  contentType @14 :Text;
  cacheStatus @15 :CacheStatus;
  tlsVersion @16 :TlsVersion;
  originResponseTimeMs @17 :Float32;
  edgeTimeToFirstByteMs @18 :Float32;
  edgeLocation @19 :Text;           # IATA-style colo code, e.g. "FRA"
  requestId @20 :Text;
  rayId @21 :Text;
  country @22 :Text;                # ISO 3166-1 alpha-2
  asn @23 :UInt32;
  remoteUser @24 :Text;             # combined log %u; "-" is stored as empty
  ident @25 :Text;                  # combined log %l; "-" is stored as empty

  enum Method {
    unknown @0;
    get @1;
    head @2;
    post @3;
    put @4;
    delete @5;
    options @6;
    patch @7;
    connect @8;
    trace @9;
    other @10;
  }

  enum Scheme {
    unknown @0;
    http @1;
    https @2;
  }

  enum CacheStatus {
    unknown @0;
    hit @1;
    miss @2;
    expired @3;
    stale @4;
    bypass @5;
    dynamic @6;
    revalidated @7;
    updating @8;
  }

  enum TlsVersion {
    none @0;
    tls10 @1;
    tls11 @2;
    tls12 @3;
    tls13 @4;
  }
}
