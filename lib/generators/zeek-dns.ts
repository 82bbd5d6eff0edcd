import { startTime, timeStep } from './log-generator.js'
import type { GeneratorOptions, LogGenerator } from './log-generator.js'
import { Rng, ZipfPicker } from './random.js'
import { CDN_SUFFIXES, DOMAINS, WORDS, randomPublicIpv4 } from './vocab.js'

/**
 * Zeek dns.log TSV rows (the 24 default columns). Modelled: internal clients that each use one
 * resolver, a Zipf mix of public and internal names, A+AAAA pairs from one socket (one uid), PTR
 * and NetBIOS noise, names that never resolve (NXDOMAIN or no reply and retries), answers whose
 * TTLs count down in the resolver cache, and the duplicate row a sensor logs when it sees the same
 * packet twice (same uid, ts a few microseconds later), which real captures are full of.
 */

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

interface Name {
  query: string
  qtype: 'A' | 'AAAA' | 'PTR' | 'SRV' | 'TXT' | 'NBSTAT'
  rcode: 'NOERROR' | 'NXDOMAIN' | 'SERVFAIL' | '-'
  cnames: readonly string[]
  v4: readonly string[]
  v6: readonly string[]
  ttl: number
}

interface Client {
  ip: string
  resolver: string
}

const QTYPE_CODES: Readonly<Record<Name['qtype'], number>> = { A: 1, AAAA: 28, PTR: 12, SRV: 33, TXT: 16, NBSTAT: 33 }
const RCODES: Readonly<Record<Name['rcode'], string>> = { NOERROR: '0', NXDOMAIN: '3', SERVFAIL: '2', '-': '-' }

function buildName(rng: Rng, query: string, org: string): Name {
  const internal = query.endsWith(org)
  const rcode = rng.weighted<Name['rcode']>([
    ['NOERROR', 85],
    ['NXDOMAIN', 8],
    ['-', 6],
    ['SERVFAIL', 1]
  ])
  const cnames =
    !internal && rng.chance(0.35)
      ? [
          `${query}.${rng.pick(CDN_SUFFIXES)}`,
          ...(rng.chance(0.5) ? [`e${rng.int(9999)}.${rng.pick(CDN_SUFFIXES)}`] : [])
        ]
      : []
  return {
    query,
    qtype: 'A',
    rcode,
    cnames,
    v4: Array.from(
      {
        length: rng.weighted([
          [1, 6],
          [2, 3],
          [4, 1]
        ] as const)
      },
      () => (internal ? `10.${rng.int(8)}.${rng.int(8)}.${rng.range(1, 200)}` : randomPublicIpv4(rng))
    ),
    v6: rng.chance(0.4) ? [`2${rng.hex(3)}:${rng.hex(4)}:${rng.hex(4)}::${rng.int(0xff).toString(16)}`] : [],
    ttl: rng.pick([20, 60, 300, 3600, 86400, 172800])
  }
}

export function createZeekDnsGenerator(opts: GeneratorOptions): LogGenerator {
  const rng = new Rng(opts.seed)
  const org = `${rng.pick(WORDS)}.${rng.pick(['corp', 'lan', 'org', 'edu'])}`
  const internalNames = Array.from(
    { length: 40 },
    () => `${rng.pick(WORDS)}${rng.chance(0.4) ? rng.range(1, 9) : ''}.${org}`
  )
  const names = new ZipfPicker(
    [...internalNames.slice(0, 4), ...DOMAINS, ...internalNames.slice(4)].map((q) => buildName(rng, q, org)),
    1.1
  )
  const resolvers = [`10.0.0.${rng.range(1, 100)}`, `10.${rng.range(1, 20)}.0.1`, `10.${rng.range(1, 20)}.0.1`]
  const clients = new ZipfPicker(
    Array.from({ length: 120 }, (): Client => ({
      ip: `10.${rng.range(40, 50)}.${rng.range(1, 9)}.${rng.range(2, 200)}`,
      resolver: rng.weighted([
        [resolvers[0] as string, 6],
        [resolvers[1] as string, 2],
        [resolvers[2] as string, 2]
      ])
    })),
    1.0
  )
  const pending: Array<{ line: string; us: number }> = []
  let nowUs = startTime(opts) * 1000
  const step = timeStep(opts, 1000)
  let lastMs = 0

  const ts = (us: number): string => `${Math.floor(us / 1e6)}.${String(us % 1e6).padStart(6, '0')}`

  const emit = (
    atUs: number,
    uid: string,
    c: Client,
    port: number,
    respP: number,
    trans: number,
    rtt: string,
    query: string,
    qtype: Name['qtype'],
    rcode: Name['rcode'],
    aa: boolean,
    rd: boolean,
    ra: boolean,
    answers: string,
    ttls: string
  ): void => {
    const cols = [
      ts(atUs),
      uid,
      c.ip,
      String(port),
      c.resolver,
      String(respP),
      'udp',
      String(trans),
      rtt,
      query,
      '1',
      'C_INTERNET',
      String(QTYPE_CODES[qtype]),
      qtype,
      RCODES[rcode],
      rcode,
      aa ? 'T' : 'F',
      'F',
      rd ? 'T' : 'F',
      ra ? 'T' : 'F',
      '0',
      answers,
      ttls,
      'F'
    ]
    pending.push({ line: cols.join('\t'), us: atUs })
    // Sensor double-capture: same row again a few microseconds later with a near-identical rtt.
    if (rng.chance(0.85)) {
      const dupRtt = rtt === '-' ? '-' : (Number(rtt) + rng.range(0, 3) / 1e6).toFixed(6)
      cols[0] = ts(atUs + rng.range(1, 4))
      cols[8] = dupRtt
      pending.push({ line: cols.join('\t'), us: atUs + 1 })
    }
  }

  const exchange = (): void => {
    nowUs = step(nowUs, Math.floor(rng.exp(300_000)))
    const c = clients.pick(rng)
    const uid = `C${rng.chars(BASE62, rng.chance(0.5) ? 17 : 16)}`
    const port = rng.range(1024, 65535)
    const kind = rng.weighted([
      ['name', 88],
      ['ptr', 7],
      ['nbstat', 3],
      ['srv', 2]
    ] as const)
    if (kind === 'nbstat') {
      // NetBIOS status probes to port 137 never get an answer and are retried.
      const trans = rng.int(65536)
      for (let i = 0; i < 3; i++)
        emit(nowUs + i * 1_500_000, uid, c, 137, 137, trans, '-', '*', 'NBSTAT', '-', false, false, false, '-', '-')
      return
    }
    if (kind === 'ptr') {
      const q = `${rng.range(1, 254)}.${rng.range(0, 9)}.${rng.range(40, 50)}.10.in-addr.arpa`
      emit(
        nowUs,
        uid,
        c,
        port,
        53,
        rng.int(65536),
        rng.logNormal(0.0008, 0.4).toFixed(6),
        q,
        'PTR',
        'NXDOMAIN',
        false,
        true,
        true,
        '-',
        '-'
      )
      return
    }
    const name = names.pick(rng)
    const qtype: Name['qtype'] = kind === 'srv' ? 'SRV' : 'A'
    const types: Name['qtype'][] = qtype === 'A' && rng.chance(0.5) ? ['A', 'AAAA'] : [qtype]
    let at = nowUs
    for (const t of types) {
      const trans = rng.int(65536)
      if (name.rcode === '-') {
        for (let i = 0; i < rng.range(1, 3); i++)
          emit(at + i * 1_000_000, uid, c, port, 53, trans, '-', name.query, t, '-', false, true, false, '-', '-')
        continue
      }
      const addrs = t === 'A' ? name.v4 : t === 'AAAA' ? name.v6 : []
      const answers = name.rcode === 'NOERROR' ? [...name.cnames, ...addrs] : []
      // Resolver cache: remaining TTL counts down from the record's TTL.
      const left = name.ttl - (Math.floor(at / 1e6) % name.ttl)
      const rtt = (left === name.ttl ? rng.logNormal(0.02, 0.8) : rng.logNormal(0.0009, 0.3)).toFixed(6)
      emit(
        at,
        uid,
        c,
        port,
        53,
        trans,
        rtt,
        name.query,
        t,
        name.rcode,
        false,
        true,
        true,
        answers.length === 0 ? '-' : answers.join(','),
        answers.length === 0 ? '-' : answers.map(() => `${left}.000000`).join(',')
      )
      at += rng.range(50, 400)
    }
  }

  return {
    next() {
      while (pending.length === 0) exchange()
      const { line, us } = pending.shift() as { line: string; us: number }
      // Zeek writes a row when the exchange completes, so `ts` (its start) is not quite ordered;
      // the record timestamp is the write time, which never goes backwards.
      lastMs = Math.max(lastMs, Math.floor(us / 1000))
      return { key: null, value: Buffer.from(line), timestampMs: lastMs }
    }
  }
}
