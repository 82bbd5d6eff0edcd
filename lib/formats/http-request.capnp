# One HTTP request as seen by a CDN edge, the record value of the `http` log kind.
#
# tools/capnp-gen.ts generates the TypeScript reader and writers (http-request.generated.ts) from
# this file at build time. Adding a field is fine (append with the next ordinal); renumbering or
# retyping an existing field breaks every stored record.
@0xb6f1d8e0c3a4f215;

# The string the TypeScript side uses for an enumerant, where it differs from the schema name.
annotation label(enumerant) :Text;

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
    unknown @0 $label("UNKNOWN");
    get @1 $label("GET");
    head @2 $label("HEAD");
    post @3 $label("POST");
    put @4 $label("PUT");
    delete @5 $label("DELETE");
    options @6 $label("OPTIONS");
    patch @7 $label("PATCH");
    connect @8 $label("CONNECT");
    trace @9 $label("TRACE");
    other @10 $label("OTHER");
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
    tls10 @1 $label("TLSv1.0");
    tls11 @2 $label("TLSv1.1");
    tls12 @3 $label("TLSv1.2");
    tls13 @4 $label("TLSv1.3");
  }
}
