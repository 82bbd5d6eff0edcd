import assert from 'node:assert/strict'
import { it } from 'node:test'
import { DNSMASQ_LINE, dnsmasqFormat } from '../../../lib/formats/dnsmasq.js'
import { corpusLines } from '../../helpers/corpus.js'

it('reads the query id and client/port of every Pi-hole log-queries=extra line', () => {
  const lines = corpusLines('dns_pihole_extra_fixture.log')
  assert.equal(lines.length, 58)
  for (const line of lines) {
    const m = DNSMASQ_LINE.exec(line)
    assert.ok(m, line)
    const [, , , , id, client, port, message] = m
    assert.match(id ?? '', /^\d+$/, line)
    assert.match(client ?? '', /^(192\.168\.1\.3|127\.0\.0\.1)$/, line)
    assert.ok(Number(port) > 0 && Number(port) < 65536, line)
    assert.match(
      message ?? '',
      /^(query\[\w+\]|forwarded|reply|cached|gravity blocked|\/etc\/pihole\/local\.list) /,
      line
    )
    // time, process, pid, query id, client, port, message
    assert.equal(dnsmasqFormat.decode(dnsmasqFormat.encodeLine(line)), 7, line)
  }
})

it('plain log-queries lines keep the whole message, with no query id or client taken from it', () => {
  for (const line of corpusLines('dns_dnsmasq_iodine_lab_2020.log')) {
    const m = DNSMASQ_LINE.exec(line)
    assert.ok(m, line)
    assert.equal(m[4], undefined, line)
    assert.equal(m[7], line.slice(line.indexOf(']: ') + 3), line)
    assert.equal(dnsmasqFormat.decode(dnsmasqFormat.encodeLine(line)), 4, line)
  }
})

it('an IPv6 client in the extra variant', () => {
  const m = DNSMASQ_LINE.exec('Jan  3 09:12:01 dnsmasq[812]: 41 fd00::1c2/50110 query[AAAA] example.org from fd00::1c2')
  assert.deepEqual(m?.slice(4), ['41', 'fd00::1c2', '50110', 'query[AAAA] example.org from fd00::1c2'])
})
