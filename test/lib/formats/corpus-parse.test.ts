import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, SqueezeError } from '../../../lib/errors.js'
import { LOG_KINDS, formatFor } from '../../../lib/formats/index.js'
import type { LogKind } from '../../../lib/formats/index.js'
import { CORPUS_FIXTURES, corpusLines } from '../../helpers/corpus.js'

interface Tally {
  accepted: number
  rejected: Array<{ line: number; reason: string }>
}

function tally(file: string): Tally {
  const fixture = CORPUS_FIXTURES.find((f) => f.file === file)
  assert.ok(fixture, `${file} is a listed fixture`)
  const format = formatFor(fixture.kind)
  const out: Tally = { accepted: 0, rejected: [] }
  corpusLines(file).forEach((line, i) => {
    try {
      const value = format.encodeLine(line)
      assert.ok(format.decode(value) > 0, `line ${i + 1} decoded to zero fields`)
      out.accepted++
    } catch (err) {
      assert.ok(err instanceof SqueezeError, `line ${i + 1}: ${String(err)}`)
      assert.equal(err.code, ErrorCodes.PARSE_LINE)
      out.rejected.push({ line: i + 1, reason: err.message })
    }
  })
  return out
}

describe('every fixture line through formatFor(kind)', () => {
  it('covers all six kinds', () => {
    assert.deepEqual([...LOG_KINDS].sort(), ['dns-dnsmasq', 'dns-zeek', 'http', 'journald', 'nginx-error', 'syslog'])
    assert.deepEqual([...new Set(CORPUS_FIXTURES.map((f) => f.kind))].sort(), [...LOG_KINDS].sort())
  })

  it('http (Apache combined): 9999/10000, line 8899 (truncated user agent) rejected with a reason', () => {
    const t = tally('access_apache_semicomplete_2015.log')
    assert.equal(t.accepted, 9999)
    assert.deepEqual(
      t.rejected.map((r) => r.line),
      [8899]
    )
    assert.match(t.rejected[0]?.reason ?? '', /unbalanced quotes/)
  })

  it('journald: 1836/1836', () => {
    const t = tally('journald_fedora37_rpi4_system.json')
    assert.equal(t.accepted, 1836)
    assert.equal(t.rejected.length, 0)
  })

  it('nginx-error ([error] and [crit] lines): 374/374', () => {
    const t = tally('nginx_error_chemfh_2023.log')
    assert.equal(t.accepted, 374)
    assert.equal(t.rejected.length, 0)
  })

  it('dns-dnsmasq, plain log-queries (start-up, query, forwarded, reply lines): 88/88', () => {
    const t = tally('dns_dnsmasq_iodine_lab_2020.log')
    assert.equal(t.accepted, 88)
    assert.equal(t.rejected.length, 0)
  })

  it('dns-dnsmasq, Pi-hole log-queries=extra: 58/58', () => {
    const t = tally('dns_pihole_extra_fixture.log')
    assert.equal(t.accepted, 58)
    assert.equal(t.rejected.length, 0)
  })

  it('dns-zeek: 8000 records, the 8 # header lines skipped as "header"', () => {
    const t = tally('dns_zeek_wrccdc2018_first8000.log')
    assert.equal(t.accepted, 8000)
    assert.equal(t.rejected.length, 8)
    assert.ok(t.rejected.every((r) => r.reason === 'header' && r.line <= 8))
  })

  it('dns-zeek: a line with a column too few or too many, or a numeric column that is not a number, is rejected as decode() would, with the reason', () => {
    const zeek = formatFor('dns-zeek')
    const good = corpusLines('dns_zeek_wrccdc2018_first8000.log').find((line) => !line.startsWith('#')) as string
    const cols = good.split('\t')
    const reasonOf = (line: string): string => {
      try {
        zeek.checkLine?.(line)
        return 'accepted'
      } catch (err) {
        assert.ok(err instanceof SqueezeError && err.code === ErrorCodes.PARSE_LINE)
        return err.message
      }
    }
    const decodes = (line: string): boolean => {
      try {
        zeek.decode(Buffer.from(line))
        return true
      } catch {
        return false
      }
    }
    const cases: Array<[string, string]> = [
      [good, 'accepted'],
      [cols.slice(0, -1).join('\t'), 'expected 24 tab-separated columns, got 23'],
      [[...cols, '-'].join('\t'), 'expected 24 tab-separated columns, got 25'],
      [cols.map((c, i) => (i === 3 ? 'port' : c)).join('\t'), 'column id.orig_p is not numeric'],
      [cols.map((c, i) => (i === 0 ? '-' : c)).join('\t'), 'accepted'],
      // Both wrong: the column count is the reason, as before.
      [
        cols
          .slice(0, -1)
          .map((c, i) => (i === 3 ? 'port' : c))
          .join('\t'),
        'expected 24 tab-separated columns, got 23'
      ],
      ['', 'expected 24 tab-separated columns, got 1']
    ]
    for (const [line, reason] of cases) {
      assert.equal(reasonOf(line), reason, JSON.stringify(line.slice(0, 60)))
      assert.equal(decodes(line), reason === 'accepted', `decode agrees on ${JSON.stringify(line.slice(0, 60))}`)
    }
  })

  it('syslog (RFC 3164 sshd/sftp): 236/236', () => {
    const t = tally('syslog_mtail_sftp_chroot.log')
    assert.equal(t.accepted, 236)
    assert.equal(t.rejected.length, 0)
  })
})

describe('text kinds reject corrupt values with DECODE_RECORD', () => {
  const cases: Array<[LogKind, string]> = [
    ['journald', '[1,2,3]'],
    ['journald', '{"MESSAGE": "trunc'],
    ['nginx-error', 'not an nginx line'],
    ['dns-dnsmasq', 'Jun 19 21:30:43 bind[830]: query'],
    ['dns-zeek', 'a\tb\tc'],
    ['syslog', '']
  ]
  for (const [kind, text] of cases) {
    it(`${kind}: ${JSON.stringify(text)}`, () => {
      assert.throws(
        () => formatFor(kind).decode(Buffer.from(text)),
        (err: unknown) => err instanceof SqueezeError && err.code === ErrorCodes.DECODE_RECORD
      )
    })
  }

  it('invalid UTF-8 and random bytes never escape as another error type', () => {
    let seed = 7
    const rand = (): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) & 0xff
    for (const kind of LOG_KINDS) {
      for (let i = 0; i < 200; i++) {
        const bytes = Buffer.from(Array.from({ length: rand() }, rand))
        try {
          formatFor(kind).decode(bytes)
        } catch (err) {
          assert.ok(err instanceof SqueezeError && err.code === ErrorCodes.DECODE_RECORD, `${kind}: ${String(err)}`)
        }
      }
    }
  })

  it('formatFor rejects an unknown kind', () => {
    assert.throws(() => formatFor('csv' as LogKind), SqueezeError)
  })
})
