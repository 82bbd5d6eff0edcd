import { startTime, timeStep } from './log-generator.js'
import type { GeneratorOptions, LogGenerator } from './log-generator.js'
import { Rng, ZipfPicker } from './random.js'
import { nginxTime } from './time-format.js'
import { IMAGE_WORDS, WORDS, randomPublicIpv4 } from './vocab.js'

/**
 * nginx error_log lines. Error logs are bursty and repetitive: an upstream falls over and the same
 * "connect() failed" line repeats for every request until it recovers, a worker crash-loops, a
 * scanner probes missing files. So the generator runs incidents, each a run of near-identical lines
 * from one failure mode, with the site's pages and clients drawn by popularity.
 */

type Incident =
  'upstream-busy' | 'upstream-gone' | 'upstream-timeout' | 'worker-crash' | 'missing-file' | 'upstream-reset' | 'misc'

interface State {
  master: number
  worker: number
  conn: number
  nowMs: number
  incident: Incident
  left: number
  /** Pages hit hardest during this incident: outages concentrate on what is popular right then. */
  hot: ReadonlyArray<{ path: string; post: boolean }>
}

export function createNginxErrorGenerator(opts: GeneratorOptions): LogGenerator {
  const rng = new Rng(opts.seed)
  const host = `www.${rng.pick(WORDS)}${rng.pick(['tech', 'works', 'labs', 'site'])}.com`
  const app = rng.pick(['gunicorn', 'uwsgi', 'puma', 'app'])
  const socket = `unix:/run/${app}.sock`
  const root = `/srv/${rng.pick(WORDS)}/static`
  // Each page is fetched one way (forms POST, articles GET), so method follows the page.
  const pages = new ZipfPicker(
    [
      '/',
      ...Array.from(
        { length: 120 },
        () => `/${rng.pick(WORDS)}/${rng.pick(WORDS)}${rng.chance(0.4) ? `%20${rng.pick(WORDS)}` : ''}`
      )
    ].map((path) => ({ path, post: rng.chance(0.6) })),
    1.1
  )
  const missing = new ZipfPicker(
    Array.from(
      { length: 80 },
      () =>
        `/media/${rng.pick(WORDS)}/${rng.pick(IMAGE_WORDS)}${rng.chance(0.5) ? `-${rng.int(50)}` : ''}.${rng.pick(['png', 'jpg', 'gif', 'css', 'js'])}`
    ),
    1.0
  )
  const hotPages = new ZipfPicker(pages.items.slice(0, 20), 1.4)
  // Few distinct clients: the same visitors retry the failing page again and again.
  const clients = new ZipfPicker(
    Array.from({ length: 400 }, () => randomPublicIpv4(rng)),
    1.2
  )
  const step = timeStep(opts)
  const s: State = {
    master: rng.range(900, 30000),
    worker: 0,
    conn: rng.range(1000, 90000),
    nowMs: startTime(opts),
    incident: 'misc',
    left: 0,
    hot: []
  }
  s.worker = s.master + rng.range(1, 50)

  const newIncident = (): void => {
    s.incident = rng.weighted<Incident>([
      ['upstream-busy', 40],
      ['worker-crash', 30],
      ['upstream-gone', 14],
      ['missing-file', 8],
      ['upstream-timeout', 4],
      ['upstream-reset', 2],
      ['misc', 2]
    ])
    s.left = rng.geometric(s.incident === 'missing-file' || s.incident === 'misc' ? 3 : 40)
    // The same heavy pages (big forms, slow queries) are what tip the upstream over, incident after incident.
    s.hot = Array.from({ length: rng.range(1, 3) }, () => hotPages.pick(rng))
    // Quiet time between incidents: minutes to hours.
    s.nowMs = step(s.nowMs, Math.floor(rng.exp(20 * 60_000)))
  }

  let currentClient = ''
  const request = (path: string, post: boolean, upstream: boolean): string => {
    const method = post ? 'POST' : 'GET'
    let out = `, client: ${currentClient}, server: _, request: "${method} ${path} HTTP/1.1"`
    if (upstream) out += `, upstream: "http://${socket}:${path}"`
    out += `, host: "${host}"`
    // A POST comes from the page's own form, so its referrer is the page itself.
    if (post || rng.chance(0.3))
      out += `, referrer: "http://${host}${post || rng.chance(0.5) ? path : pages.pick(rng).path}"`
    return out
  }

  let last: { client: string; conn: number; page: { path: string; post: boolean } } | null = null

  const line = (): string => {
    const time = nginxTime(s.nowMs)
    // Visitors hitting an error retry (reload, resubmit) on the same keep-alive connection, so the
    // same client, page and connection id often come back within seconds.
    const retry = last !== null && rng.chance(0.35)
    if (!retry) s.conn += rng.range(1, 40)
    const hot = retry && last !== null ? last.page : rng.chance(0.85) ? rng.pick(s.hot) : pages.pick(rng)
    currentClient = retry && last !== null ? last.client : clients.pick(rng)
    const conn = retry && last !== null ? last.conn : s.conn
    last = { client: currentClient, conn, page: hot }
    const hotPath = hot.path
    const post = hot.post
    switch (s.incident) {
      case 'upstream-busy':
        return `${time} [error] ${s.worker}#0: *${conn} connect() to ${socket} failed (11: Resource temporarily unavailable) while connecting to upstream${request(hotPath, post, true)}`
      case 'upstream-gone':
        return `${time} [crit] ${s.worker}#0: *${conn} connect() to ${socket} failed (2: No such file or directory) while connecting to upstream${request(hotPath, post, true)}`
      case 'upstream-timeout':
        return `${time} [error] ${s.worker}#0: *${conn} upstream timed out (110: Connection timed out) while reading response header from upstream${request(hotPath, post, true)}`
      case 'upstream-reset':
        return rng.chance(0.5)
          ? `${time} [error] ${s.worker}#0: *${conn} recv() failed (104: Connection reset by peer) while reading response header from upstream${request(hotPath, post, true)}`
          : `${time} [error] ${s.worker}#0: *${conn} upstream prematurely closed connection while reading response header from upstream${request(hotPath, post, true)}`
      case 'missing-file': {
        const file = missing.pick(rng)
        return `${time} [error] ${s.worker}#0: *${conn} open() "${root}${file}" failed (2: No such file or directory)${request(file, false, false)}`
      }
      case 'worker-crash': {
        const dead = s.worker
        s.worker += 1
        return `${time} [alert] ${s.master}#0: worker process ${dead} exited on signal 9`
      }
      case 'misc':
        return rng.weighted<string>([
          [
            `${time} [error] ${s.worker}#0: *${conn} upstream sent too big header while reading response header from upstream${request(hotPath, false, true)}`,
            3
          ],
          [
            `${time} [error] ${s.worker}#0: *${conn} client intended to send too large body: ${rng.range(1_100_000, 9_000_000)} bytes${request(hotPath, true, false)}`,
            2
          ],
          [
            `${time} [warn] ${s.worker}#0: *${conn} an upstream response is buffered to a temporary file /var/cache/nginx/proxy_temp/${rng.int(10)}/${rng.range(10, 99)}/00000${rng.range(10000, 99999)} while reading upstream${request(hotPath, false, true)}`,
            2
          ],
          [`${time} [emerg] ${s.master}#0: bind() to 0.0.0.0:80 failed (98: Address already in use)`, 1],
          [`${time} [notice] ${s.master}#0: signal process started`, 1]
        ])
    }
  }

  return {
    next() {
      if (s.left <= 0) newIncident()
      s.left--
      // Within an incident lines come every second or so (each failed request logs once).
      s.nowMs = step(s.nowMs, Math.floor(rng.exp(s.incident === 'worker-crash' ? 2500 : 1200)))
      return { key: null, value: Buffer.from(line()), timestampMs: s.nowMs }
    }
  }
}
