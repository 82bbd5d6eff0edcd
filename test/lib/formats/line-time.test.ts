import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { lineClock } from '../../../lib/formats/line-time.js'

const NOW = Date.UTC(2026, 10, 30, 8, 0, 0)

describe('lineClock', () => {
  it("reads each kind's own time field, or nothing when a line has none", () => {
    const cases: Array<[Parameters<typeof lineClock>[0], string, number]> = [
      [
        'http',
        '83.149.9.216 - - [17/May/2015:10:05:03 +0200] "GET /x HTTP/1.1" 200 203023 "-" "Mozilla"',
        Date.UTC(2015, 4, 17, 8, 5, 3)
      ],
      ['nginx-error', '2011/11/18 19:13:47 [error] 1234#0: *5 open() failed', Date.UTC(2011, 10, 18, 19, 13, 47)],
      ['journald', '{"__CURSOR":"s=1","__REALTIME_TIMESTAMP":"1672531200123456","MESSAGE":"hi"}', 1672531200123.456],
      ['dns-zeek', '1520288104.123456\tCabc\t10.0.0.1\t53', 1520288104123.456],
      ['syslog', 'Jun 19 21:30:43 host sshd[42]: Accepted publickey', Date.UTC(2026, 5, 19, 21, 30, 43)],
      ['dns-dnsmasq', 'Mar  4 09:00:01 dnsmasq[7]: query[A] example.com from 10.0.0.2', Date.UTC(2026, 2, 4, 9, 0, 1)]
    ]
    for (const [kind, line, expected] of cases) {
      const clock = lineClock(kind, NOW)
      assert.equal(clock.read(line), expected, kind)
      assert.equal(clock.read('no time here'), undefined, `${kind}: a line without a time`)
    }
  })

  it('dates year-less lines across New Year into the next year, and a file that would end in the future a year back', () => {
    const clock = lineClock('syslog', NOW)
    const dec = clock.read('Dec 31 23:59:00 host cron[1]: tick') as number
    const jan = clock.read('Jan  1 00:01:00 host cron[1]: tick') as number
    assert.equal(jan - dec, 2 * 60_000, 'two minutes apart, not a year back')
    // Dated 2026-12-31 and 2027-01-01, past NOW: the file was logged from 2025-12-31.
    assert.equal(dec + clock.correctionMs(), Date.UTC(2025, 11, 31, 23, 59, 0))
    const past = lineClock('syslog', NOW)
    past.read('Mar  1 00:00:00 host a: b')
    assert.equal(past.correctionMs(), 0)
  })
})
