import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  likelyKind,
  parseSummary,
  readFirstLines,
  resolveKind,
  wrongKindError
} from '../../../lib/formats/detect-kind.js'
import { CORPUS_FIXTURES, corpusLines, corpusPath } from '../../helpers/corpus.js'

describe('detecting a log kind from the first lines', () => {
  for (const { file, kind } of CORPUS_FIXTURES) {
    it(`${file} reads as ${kind}`, async () => {
      const lines = await readFirstLines(corpusPath(file))
      assert.equal(likelyKind(lines)?.kind, kind)
      assert.equal(resolveKind('auto', lines, file).kind, kind)
    })
  }

  it('a given kind the lines are not is an error with the parse summary, naming the kind they look like', () => {
    const lines = corpusLines('syslog_mtail_sftp_chroot.log').slice(0, 200)
    assert.throws(() => resolveKind('http', lines, 'f.log'), {
      code: 'SQUEEZE_ERR_SOURCE',
      message: /^0 of the first 200 lines parse as http \(combined log format\); they look like syslog .*--kind syslog$/
    })
    assert.equal(resolveKind('syslog', lines, 'f.log').kind, 'syslog')
  })

  it('lines of no known kind: auto says so, and the summary counts every line', () => {
    const garbage = ['not a log line', 'nor this one']
    assert.throws(() => resolveKind('auto', garbage, 'g.log'), {
      code: 'SQUEEZE_ERR_SOURCE',
      message: /--kind auto: g.log is not a log kind squeeze knows/
    })
    assert.equal(parseSummary('http', 0, 25567), '0 of 25,567 lines parse as http (combined log format)')
    assert.match(wrongKindError('http', 0, 2, garbage).message, /no kind squeeze knows/)
  })
})
