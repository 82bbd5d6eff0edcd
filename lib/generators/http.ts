import { emptyHttpRequest } from '../formats/http-request.js'
import { writeHttpRequest } from '../formats/http-request-writer.js'
import type { CacheStatus, HttpMethod, HttpRequestFields, TlsVersion } from '../formats/http-request.js'
import { startTime, timeStep } from './log-generator.js'
import type { GeneratorOptions, LogGenerator } from './log-generator.js'
import { Rng, ZipfPicker } from './random.js'
import { EDGE_LOCATIONS, GEO, IMAGE_WORDS, SEARCH_REFERERS, USER_AGENTS, WORDS, randomPublicIpv4 } from './vocab.js'

/**
 * CDN edge access records (Cap'n Proto HttpRequest). The redundancy real access logs have comes
 * from structure, so that is what this models: a site with popular pages that each pull the same
 * assets (fixed sizes), visitors whose sessions fetch a page then its assets with the page as
 * referer over one keep-alive connection, Zipf popularity for visitors, pages and user agents, and
 * a few concurrent sessions interleaving in time.
 */

interface Asset {
  path: string
  size: number
  contentType: string
}

interface Page {
  path: string
  size: number
  assets: readonly Asset[]
}

interface Site {
  host: string
  pages: ZipfPicker<Page>
  shared: readonly Asset[]
}

interface Client {
  ip: string
  /** EDGE_LOCATIONS index of `edge` times 16: the ray id's colo bits. */
  edgeBits: number
  userAgent: string
  bot: boolean
  country: string
  asn: number
  edge: string
  tls: TlsVersion
  protocol: string
  /** Returning visitors revalidate cached assets (304) instead of downloading them. */
  returning: boolean
}

interface Session {
  client: Client
  site: Site
  port: number
  /** The record key: client address and port, the same for every request of the connection. */
  key: Buffer
  /** Edge server that terminated this keep-alive connection. */
  server: number
  queue: Array<{ asset: Asset | null; page: Page; referer: string }>
}

const PROTOCOLS = [
  ['HTTP/2', 0.55],
  ['HTTP/1.1', 0.35],
  ['HTTP/3', 0.1]
] as const
const RARE_METHODS: readonly HttpMethod[] = ['HEAD', 'POST', 'OPTIONS']
const ASSET_CACHE = [
  ['hit', 0.86],
  ['miss', 0.08],
  ['expired', 0.04],
  ['revalidated', 0.02]
] as const
const QUERIES = ['page=2', 'page=3', 'utm_source=newsletter&utm_medium=email', 'ref=hn']

/** One of QUERIES or a search for a word, each as likely; the word is drawn first either way, as it always was. */
function pickQuery(rng: Rng): string {
  const word = rng.pick(WORDS)
  const i = rng.int(QUERIES.length + 1)
  return i < QUERIES.length ? (QUERIES[i] as string) : `q=${word}`
}

const HEX_DIGITS = Array.from('0123456789abcdef', (c) => c.charCodeAt(0))

function hexDigit(n: number, shift: number): number {
  return HEX_DIGITS[(n >>> shift) & 15] as number
}

/**
 * A snowflake-style id as 16 hex digits: ms time above 22 bits of colo and server (10) and per-server sequence
 * (12). Two 32-bit halves in plain numbers and one flat string, not a BigInt and toString(16): the generator's
 * rate is a target of its own, and those were a tenth of it.
 */
function rayIdHex(ms: number, colo: number, sequence: number): string {
  const high = Math.floor(ms / 1024) >>> 0
  const low = (((ms % 1024) << 22) | (colo << 12) | sequence) >>> 0
  return String.fromCharCode(
    hexDigit(high, 28),
    hexDigit(high, 24),
    hexDigit(high, 20),
    hexDigit(high, 16),
    hexDigit(high, 12),
    hexDigit(high, 8),
    hexDigit(high, 4),
    hexDigit(high, 0),
    hexDigit(low, 28),
    hexDigit(low, 24),
    hexDigit(low, 20),
    hexDigit(low, 16),
    hexDigit(low, 12),
    hexDigit(low, 8),
    hexDigit(low, 4),
    hexDigit(low, 0)
  )
}

/** Visitors in flight at once; their requests interleave in the log. */
const CONCURRENT_SESSIONS = 2

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  css: 'text/css',
  js: 'application/javascript',
  png: 'image/png',
  jpg: 'image/jpeg',
  svg: 'image/svg+xml',
  ico: 'image/x-icon',
  woff2: 'font/woff2'
}

function asset(rng: Rng, path: string, medianBytes: number): Asset {
  const ext = path.slice(path.lastIndexOf('.') + 1)
  return {
    path,
    size: Math.max(120, Math.round(rng.logNormal(medianBytes, 0.9))),
    contentType: CONTENT_TYPES[ext] ?? 'application/octet-stream'
  }
}

function buildSite(rng: Rng, host: string, pageCount: number): Site {
  const shared = [
    asset(rng, '/favicon.ico', 1500),
    asset(rng, '/css/style.css', 9000),
    asset(rng, '/css/reset.css', 1100),
    asset(rng, '/js/site.js', 24000),
    asset(rng, '/images/logo.png', 5000),
    asset(rng, `/fonts/${rng.pick(['inter', 'roboto', 'source-sans'])}-regular.woff2`, 30000)
  ]
  const pages: Page[] = []
  for (let i = 0; i < pageCount; i++) {
    const section = rng.pick(WORDS)
    const slug = `${rng.pick(WORDS)}-${rng.pick(WORDS)}`
    const path = rng.chance(0.5) ? `/${section}/${slug}/` : `/${section}/${2010 + rng.int(15)}/${slug}.html`
    const own: Asset[] = []
    const images = rng.int(6)
    for (let j = 0; j < images; j++) {
      own.push(
        asset(
          rng,
          `${path.replace(/[^/]*$/, '')}images/${rng.pick(IMAGE_WORDS)}-${rng.int(20)}.${rng.chance(0.7) ? 'png' : 'jpg'}`,
          60000
        )
      )
    }
    pages.push({ path, size: Math.round(rng.logNormal(14000, 0.6)), assets: own })
  }
  return { host, pages: new ZipfPicker(pages, 1.05), shared }
}

/** Anycast sends a country's visitors to the same nearby colo. */
const COUNTRY_EDGE: Readonly<Record<string, (typeof EDGE_LOCATIONS)[number]>> = {
  US: 'IAD',
  CA: 'ORD',
  BR: 'GRU',
  DE: 'FRA',
  NL: 'AMS',
  GB: 'LHR',
  FR: 'CDG',
  ES: 'CDG',
  IT: 'FRA',
  SE: 'AMS',
  PL: 'WAW',
  RU: 'WAW',
  IN: 'BOM',
  JP: 'NRT',
  KR: 'NRT',
  CN: 'SIN',
  AU: 'SYD'
}

function edgeFor(country: string): (typeof EDGE_LOCATIONS)[number] {
  return COUNTRY_EDGE[country] ?? 'IAD'
}

function buildClient(rng: Rng, agents: ZipfPicker<string>): Client {
  const userAgent = agents.pick(rng)
  const [country, asn] = rng.pick(GEO)
  const tls: TlsVersion = rng.chance(0.8) ? 'TLSv1.3' : 'TLSv1.2'
  const edge = edgeFor(country)
  return {
    ip: randomPublicIpv4(rng),
    edgeBits: EDGE_LOCATIONS.indexOf(edge) * 16,
    userAgent,
    bot: /bot|crawler|spider|curl|wget|python|go-http|feed/i.test(userAgent),
    country,
    asn,
    edge,
    tls,
    protocol: rng.weighted(PROTOCOLS),
    returning: rng.chance(0.35)
  }
}

export function createHttpGenerator(opts: GeneratorOptions): LogGenerator {
  const rng = new Rng(opts.seed)
  const brand = `${rng.pick(WORDS)}${rng.pick(['hub', 'labs', 'works', 'ly', 'io'])}`
  const sites = new ZipfPicker(
    [
      buildSite(rng, `www.${brand}.com`, 400),
      buildSite(rng, `blog.${brand}.com`, 150),
      buildSite(rng, `docs.${brand}.com`, 100)
    ],
    1.2
  )
  const agents = new ZipfPicker(USER_AGENTS, 1.1)
  const clients = new ZipfPicker(
    Array.from({ length: 3000 }, () => buildClient(rng, agents)),
    1.0
  )
  const active: Session[] = []
  let rayCounter = 0
  let nowMs = startTime(opts)
  const step = timeStep(opts)

  const startSession = (): Session => {
    const client = clients.pick(rng)
    const site = sites.pick(rng)
    const port = rng.range(32768, 60999)
    // Keyed by connection (client address and port): a visit's requests stay in order on one partition, and
    // thousands of connections spread evenly over partitions (three hosts, or Zipf-popular clients, do not).
    const session: Session = {
      client,
      site,
      port,
      key: Buffer.from(`${client.ip}:${port}`),
      server: rng.int(16),
      queue: []
    }
    let referer = client.bot ? '' : rng.chance(0.5) ? '' : rng.pick(SEARCH_REFERERS)
    const pages = client.bot ? rng.geometric(2) : rng.geometric(1.8)
    for (let p = 0; p < pages; p++) {
      const page = site.pages.pick(rng)
      session.queue.push({ asset: null, page, referer })
      const pageUrl = `https://${site.host}${page.path}`
      if (!client.bot) {
        // Browsers fetch the page's assets with the page as referer; site-wide ones only once.
        const assets = p === 0 ? [...site.shared, ...page.assets] : page.assets
        for (const a of assets) session.queue.push({ asset: a, page, referer: pageUrl })
      }
      referer = pageUrl
    }
    return session
  }

  // One record object, refilled for each request: the writer copies what it needs, and a fresh one per record
  // was a tenth of the generator's garbage. requestId, remoteUser and ident stay empty.
  const f = emptyHttpRequest()
  const fields = (s: Session, item: Session['queue'][number]): HttpRequestFields => {
    const { client } = s
    // Edge logs stamp requests at millisecond precision.
    f.timestampNs = BigInt(nowMs) * 1_000_000n
    f.clientIp = client.ip
    f.clientPort = s.port
    f.method = item.asset === null && rng.chance(0.02) ? rng.pick(RARE_METHODS) : 'GET'
    f.scheme = client.bot && rng.chance(0.2) ? 'http' : 'https'
    f.host = s.site.host
    f.path = item.asset?.path ?? item.page.path
    f.query = item.asset === null && rng.chance(0.08) ? pickQuery(rng) : ''
    f.protocol = client.protocol
    f.userAgent = client.userAgent
    f.referer = item.referer
    f.tlsVersion = f.scheme === 'https' ? client.tls : 'none'
    f.country = client.country
    f.asn = client.asn
    f.edgeLocation = client.edge
    // Snowflake-style id (ms time | edge server | per-server sequence), the way edge request ids are
    // usually minted without coordination: unique per request, yet mostly predictable bits.
    rayCounter = (rayCounter + 1) & 0xfff
    f.rayId = `${rayIdHex(nowMs, client.edgeBits + s.server, rayCounter)}-${client.edge}`

    let status = 200
    let body = item.asset?.size ?? item.page.size + rng.int(64)
    let cache: CacheStatus = item.asset === null ? (rng.chance(0.7) ? 'dynamic' : 'hit') : rng.weighted(ASSET_CACHE)
    if (f.scheme === 'http') {
      status = 301
      body = 162
      cache = 'dynamic'
    } else if (item.asset !== null && client.returning && rng.chance(0.7)) {
      status = 304
      body = 0
    } else if (rng.chance(0.015)) {
      status = 404
      body = 548
      cache = 'miss'
    } else if (item.asset !== null && item.asset.size > 50000 && rng.chance(0.03)) {
      status = 206
      body = Math.round(item.asset.size / 4)
    }
    f.status = status
    f.responseBytes = BigInt(body)
    f.requestBytes = BigInt(180 + f.path.length + f.userAgent.length + f.referer.length + f.host.length)
    f.contentType =
      status === 301 || status === 404 ? 'text/html' : (item.asset?.contentType ?? 'text/html; charset=utf-8')
    f.cacheStatus = cache
    const toOrigin = cache === 'miss' || cache === 'dynamic' || cache === 'expired'
    // Integral milliseconds: edge logs report timings at ms precision.
    f.originResponseTimeMs = toOrigin ? Math.round(rng.logNormal(45, 0.7)) : 0
    f.edgeTimeToFirstByteMs = f.originResponseTimeMs + rng.int(3)
    return f
  }

  return {
    next() {
      // A few sessions overlap in time, as concurrent visitors do; new ones arrive as old ones end.
      while (active.length < CONCURRENT_SESSIONS) active.push(startSession())
      const i = rng.int(active.length)
      const s = active[i] as Session
      const item = s.queue.shift()
      if (s.queue.length === 0) active.splice(i, 1)
      if (item === undefined) return this.next()
      const gap = rng.exp(item.asset === null ? 1500 : 120)
      nowMs = step(nowMs, Math.floor(gap))
      return { key: s.key, value: writeHttpRequest(fields(s, item)), timestampMs: nowMs }
    }
  }
}
