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
  /** Edge server that terminated this keep-alive connection. */
  server: number
  queue: Array<{ asset: Asset | null; page: Page; referer: string }>
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
  return { path, size: Math.max(120, Math.round(rng.logNormal(medianBytes, 0.9))), contentType: CONTENT_TYPES[ext] ?? 'application/octet-stream' }
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
      own.push(asset(rng, `${path.replace(/[^/]*$/, '')}images/${rng.pick(IMAGE_WORDS)}-${rng.int(20)}.${rng.chance(0.7) ? 'png' : 'jpg'}`, 60000))
    }
    pages.push({ path, size: Math.round(rng.logNormal(14000, 0.6)), assets: own })
  }
  return { host, pages: new ZipfPicker(pages, 1.05), shared }
}

/** Anycast sends a country's visitors to the same nearby colo. */
const COUNTRY_EDGE: Readonly<Record<string, (typeof EDGE_LOCATIONS)[number]>> = {
  US: 'IAD', CA: 'ORD', BR: 'GRU', DE: 'FRA', NL: 'AMS', GB: 'LHR', FR: 'CDG', ES: 'CDG', IT: 'FRA', SE: 'AMS',
  PL: 'WAW', RU: 'WAW', IN: 'BOM', JP: 'NRT', KR: 'NRT', CN: 'SIN', AU: 'SYD'
}

function edgeFor(country: string): (typeof EDGE_LOCATIONS)[number] {
  return COUNTRY_EDGE[country] ?? 'IAD'
}

function buildClient(rng: Rng, agents: ZipfPicker<string>): Client {
  const userAgent = agents.pick(rng)
  const [country, asn] = rng.pick(GEO)
  const tls: TlsVersion = rng.chance(0.8) ? 'TLSv1.3' : 'TLSv1.2'
  return {
    ip: randomPublicIpv4(rng),
    userAgent,
    bot: /bot|crawler|spider|curl|wget|python|go-http|feed/i.test(userAgent),
    country,
    asn,
    edge: edgeFor(country),
    tls,
    protocol: rng.weighted([['HTTP/2', 0.55], ['HTTP/1.1', 0.35], ['HTTP/3', 0.1]] as const),
    returning: rng.chance(0.35)
  }
}

export function createHttpGenerator(opts: GeneratorOptions): LogGenerator {
  const rng = new Rng(opts.seed)
  const brand = `${rng.pick(WORDS)}${rng.pick(['hub', 'labs', 'works', 'ly', 'io'])}`
  const sites = new ZipfPicker([
    buildSite(rng, `www.${brand}.com`, 400),
    buildSite(rng, `blog.${brand}.com`, 150),
    buildSite(rng, `docs.${brand}.com`, 100)
  ], 1.2)
  const agents = new ZipfPicker(USER_AGENTS, 1.1)
  const clients = new ZipfPicker(Array.from({ length: 3000 }, () => buildClient(rng, agents)), 1.0)
  const active: Session[] = []
  let rayCounter = 0
  let nowMs = startTime(opts)
  const step = timeStep(opts)

  const startSession = (): Session => {
    const client = clients.pick(rng)
    const site = sites.pick(rng)
    const session: Session = { client, site, port: rng.range(32768, 60999), server: rng.int(16), queue: [] }
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

  const fields = (s: Session, item: Session['queue'][number]): HttpRequestFields => {
    const f = emptyHttpRequest()
    const { client } = s
    // Edge logs stamp requests at millisecond precision.
    f.timestampNs = BigInt(nowMs) * 1_000_000n
    f.clientIp = client.ip
    f.clientPort = s.port
    f.method = item.asset === null && rng.chance(0.02) ? rng.pick<HttpMethod>(['HEAD', 'POST', 'OPTIONS']) : 'GET'
    f.scheme = client.bot && rng.chance(0.2) ? 'http' : 'https'
    f.host = s.site.host
    f.path = item.asset?.path ?? item.page.path
    if (item.asset === null && rng.chance(0.08)) f.query = rng.pick(['page=2', 'page=3', 'utm_source=newsletter&utm_medium=email', 'ref=hn', `q=${rng.pick(WORDS)}`])
    f.protocol = client.protocol
    f.userAgent = client.userAgent
    f.referer = item.referer
    f.tlsVersion = f.scheme === 'https' ? client.tls : 'none'
    f.country = client.country
    f.asn = client.asn
    f.edgeLocation = client.edge
    // Snowflake-style id (ms time | edge server | per-server sequence), the way edge request ids are
    // usually minted without coordination: unique per request, yet mostly predictable bits.
    const server = s.server
    rayCounter = (rayCounter + 1) & 0xfff
    const id = (BigInt(nowMs) << 22n) | (BigInt(EDGE_LOCATIONS.indexOf(client.edge as (typeof EDGE_LOCATIONS)[number]) * 16 + server) << 12n) | BigInt(rayCounter)
    f.rayId = `${id.toString(16).padStart(16, '0')}-${client.edge}`

    let status = 200
    let body = item.asset?.size ?? item.page.size + rng.int(64)
    let cache: CacheStatus = item.asset === null ? (rng.chance(0.7) ? 'dynamic' : 'hit') : rng.weighted([['hit', 0.86], ['miss', 0.08], ['expired', 0.04], ['revalidated', 0.02]] as const)
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
    f.contentType = status === 301 || status === 404 ? 'text/html' : item.asset?.contentType ?? 'text/html; charset=utf-8'
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
      const f = fields(s, item)
      // Keyed by connection (client address and port): a visit's requests stay in order on one partition, and
      // thousands of connections spread evenly over partitions (three hosts, or Zipf-popular clients, do not).
      return { key: Buffer.from(`${f.clientIp}:${f.clientPort}`), value: writeHttpRequest(f), timestampMs: nowMs }
    }
  }
}
