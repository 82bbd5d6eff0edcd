import { startTime, timeStep } from './log-generator.js'
import type { GeneratorOptions, LogGenerator } from './log-generator.js'
import { Rng, ZipfPicker } from './random.js'
import { rfc3164Time } from './time-format.js'
import { CDN_SUFFIXES, DOMAINS, WORDS, randomPublicIpv4 } from './vocab.js'

/**
 * dnsmasq query logs from a small network. One lookup is a sequence of lines: `query[A]`, then
 * either `cached` (answered from cache while the TTL lasts), `config` (a locally overridden name)
 * or `forwarded` followed by the `reply` chain through CNAMEs to addresses. Devices query in
 * bursts (A and AAAA together, several names when an app opens), and popular names dominate.
 */

interface Zone {
  name: string
  cnames: readonly string[]
  v4: readonly string[]
  v6: readonly string[]
  ttlMs: number
  local: boolean
}

function buildZone(rng: Rng, name: string): Zone {
  const hops = rng.weighted([
    [0, 5],
    [1, 3],
    [2, 2]
  ] as const)
  const cnames: string[] = []
  for (let i = 0; i < hops; i++) {
    const base = name.split('.').slice(-2).join('.')
    cnames.push(
      i === 0 && rng.chance(0.5)
        ? `${name}.${rng.pick(CDN_SUFFIXES)}`
        : `${rng.pick(['e', 'a', 'd', 'cs', 'star'])}${rng.int(9999)}.${rng.chance(0.5) ? base : rng.pick(CDN_SUFFIXES)}`
    )
  }
  const v4 = Array.from(
    {
      length: rng.weighted([
        [1, 6],
        [2, 3],
        [4, 1]
      ] as const)
    },
    () => randomPublicIpv4(rng)
  )
  const v6 = rng.chance(0.6)
    ? Array.from(
        { length: rng.range(1, 2) },
        () => `2${rng.hex(3)}:${rng.hex(4)}:${rng.int(0xfff).toString(16)}::${rng.int(0xff).toString(16)}`
      )
    : []
  return { name, cnames, v4, v6, ttlMs: rng.pick([60, 300, 300, 600, 3600]) * 1000, local: false }
}

export function createDnsmasqGenerator(opts: GeneratorOptions): LogGenerator {
  const rng = new Rng(opts.seed)
  const pid = rng.range(300, 30000)
  const tail = Array.from(
    { length: 80 },
    () =>
      `${rng.pick(WORDS)}${rng.chance(0.5) ? `-${rng.pick(WORDS)}` : ''}.${rng.pick(['com', 'net', 'org', 'io', 'de', 'co.uk'])}`
  )
  const zones = new ZipfPicker(
    [...DOMAINS, ...tail].map((n) => buildZone(rng, n)),
    1.5
  )
  // A captive portal / blocklist answers some names locally ("config ... is").
  // Spread evenly over popularity ranks so the local share of traffic does not swing with the seed.
  zones.items.forEach((z, i) => {
    z.local = i % 20 < 11
  })
  const subnet = `192.168.${rng.range(0, 9)}`
  const portal = `${subnet}.${rng.range(100, 200)}`
  const upstreams = [`${randomPublicIpv4(rng)}`, `2a02:${rng.hex(4)}:c0:2b1::4:1101`]
  const devices = Array.from({ length: rng.range(2, 4) }, () => `${subnet}.${rng.range(2, 250)}`)
  const deviceZipf = new ZipfPicker(devices, 1.6)
  const cache = new Map<string, number>()
  const pending: Array<{ line: string; ms: number }> = []
  let nowMs = startTime(opts)
  const step = timeStep(opts)

  const say = (msg: string, process = 'dnsmasq'): void => {
    pending.push({ line: `${rfc3164Time(nowMs)} ${process}[${pid}]: ${msg}`, ms: nowMs })
  }

  const lookup = (zone: Zone, type: 'A' | 'AAAA' | 'HTTPS', client: string): void => {
    say(`query[${type}] ${zone.name} from ${client}`)
    const chain = [zone.name, ...zone.cnames]
    const final = chain[chain.length - 1] as string
    const answers = type === 'A' ? zone.v4 : type === 'AAAA' ? zone.v6 : []
    const cachedUntil = cache.get(`${type} ${zone.name}`) ?? 0
    const verb = cachedUntil > nowMs ? 'cached' : 'reply'
    if (verb === 'reply') {
      say(`forwarded ${zone.name} to ${rng.pick(upstreams)}`)
      if (rng.chance(0.3)) say(`forwarded ${zone.name} to ${rng.pick(upstreams)}`)
      cache.set(`${type} ${zone.name}`, nowMs + zone.ttlMs)
    }
    for (let i = 0; i < chain.length - 1; i++) say(`${verb} ${chain[i]} is <CNAME>`)
    // Locally overridden names still walk the upstream CNAME chain; the override answers the address.
    if (zone.local && type === 'A') {
      say(`config ${zone.name} is ${portal}`)
      return
    }
    if (type === 'HTTPS') say(`${verb} ${final} is ${rng.chance(0.3) ? '<HTTPS>' : 'NODATA'}`)
    else if (answers.length === 0) say(`${verb} ${final} is NODATA-${type === 'A' ? 'IPv4' : 'IPv6'}`)
    else for (const a of answers) say(`${verb} ${final} is ${a}`)
  }

  const burst = (): void => {
    // Bursts are seconds to a minute apart; lines within a burst share the second.
    nowMs = step(nowMs, Math.floor(rng.exp(8000)))
    if (rng.chance(0.02)) {
      const mac = Array.from({ length: 6 }, () => rng.int(256).toString(16).padStart(2, '0')).join(':')
      const ip = rng.pick(devices)
      for (const step of ['DHCPDISCOVER', 'DHCPOFFER', 'DHCPREQUEST', 'DHCPACK']) {
        say(
          `${step}(wlan0) ${step === 'DHCPDISCOVER' ? '' : `${ip} `}${mac} ${step === 'DHCPACK' ? rng.pick(['android-phone', 'laptop', 'iPhone', 'DESKTOP-' + rng.hex(7).toUpperCase()]) : ''}`.trimEnd() +
            ' ',
          'dnsmasq-dhcp'
        )
      }
      return
    }
    const client = deviceZipf.pick(rng)
    const names = rng.geometric(2.5)
    for (let i = 0; i < names; i++) {
      const zone = zones.pick(rng)
      // Apps re-resolve the same name over and over (short TTLs, no stub cache on the device).
      const repeats = rng.chance(0.5) ? rng.range(2, 5) : 1
      for (let r = 0; r < repeats; r++) {
        lookup(zone, 'A', client)
        if (rng.chance(0.25)) lookup(zone, 'AAAA', client)
        if (rng.chance(0.08)) lookup(zone, 'HTTPS', client)
      }
      if (rng.chance(0.3)) nowMs = step(nowMs, rng.int(1500))
    }
  }

  return {
    next() {
      while (pending.length === 0) burst()
      const { line, ms } = pending.shift() as { line: string; ms: number }
      return { key: null, value: Buffer.from(line), timestampMs: ms }
    }
  }
}
