import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { fitHelp } from '../../../lib/terminal/help-layout.js'
import { AUDIT_HELP } from '../../../services/audit/main.js'
import { BENCH_HELP } from '../../../services/bench/main.js'
import { COMPARE_HELP } from '../../../services/compare/main.js'
import { CONSUME_HELP } from '../../../services/consumer/main.js'
import { COPY_HELP } from '../../../services/copier/main.js'
import { PRODUCE_HELP } from '../../../services/producer/main.js'

const HELPS = {
  produce: PRODUCE_HELP,
  consume: CONSUME_HELP,
  copy: COPY_HELP,
  compare: COMPARE_HELP,
  audit: AUDIT_HELP,
  bench: BENCH_HELP
}

const words = (text: string): string[] => text.split(/\s+/).filter((w) => w !== '')

describe('fitHelp', () => {
  for (const width of [80, 100, 120]) {
    it(`every command's help fits ${width} columns, with every word kept in order`, () => {
      for (const [command, help] of Object.entries(HELPS)) {
        const fitted = fitHelp(help, width)
        const long = fitted.split('\n').filter((line) => line.length > width)
        assert.deepEqual(long, [], `${command} at ${width}`)
        assert.deepEqual(words(fitted), words(help), `${command} at ${width}: the same words`)
      }
    })
  }

  it("every command's help text puts an entry's continuation lines at its description's column", () => {
    // A line indented elsewhere is not read as the entry's: it wraps on its own, a word or two to a line.
    const entry = /^( {2}\S(?:.*?\S)?)( {2,})\S/
    for (const [command, help] of Object.entries(HELPS)) {
      let column: number | undefined
      for (const line of help.split('\n')) {
        const lead = line.length - line.trimStart().length
        const term = lead === 2 ? entry.exec(line) : null
        if (term !== null) column = (term[1] ?? '').length + (term[2] ?? '').length
        else if (lead <= 2 || line.trim() === '') column = /^ {2}-\S/.test(line) ? -1 : undefined
        else if (column === -1) column = lead
        else if (column !== undefined) assert.equal(lead, column, `${command}: ${JSON.stringify(line.trim())}`)
      }
    }
  })

  it("an entry's description is joined and wrapped again at its own column", () => {
    const help = [
      'Options:',
      '  --alpha A       one two three four five six seven',
      '                  eight nine',
      '  --b             short'
    ].join('\n')
    assert.equal(
      fitHelp(help, 70),
      ['Options:', '  --alpha A       one two three four five six seven eight nine', '  --b             short'].join(
        '\n'
      )
    )
    const narrow = fitHelp(`  --alpha A       ${'word '.repeat(20).trim()}`, 60).split('\n')
    assert.ok(narrow.length > 1)
    for (const line of narrow.slice(1)) assert.match(line, /^ {18}word/)
  })

  it('a term with its description below keeps it below, at the indent it was given', () => {
    const help = [
      '  --a-very-long-option-name VALUE',
      '                  what it does,',
      '                  in two lines'
    ].join('\n')
    assert.equal(
      fitHelp(help, 60),
      ['  --a-very-long-option-name VALUE', '                  what it does, in two lines'].join('\n')
    )
  })

  it('unindented prose is one paragraph; headings, usage and other lines stay as they are when they fit', () => {
    const rest = ['', 'Usage: squeeze thing [options]', '       squeeze thing --other', 'Section:', '    example --one']
    const help = ['squeeze thing: does a', 'thing well.', ...rest, '    example --two'].join('\n')
    assert.equal(fitHelp(help, 80), ['squeeze thing: does a thing well.', ...rest, '    example --two'].join('\n'))
  })

  it('a terminal narrower than 60 columns gets 60, and one wider than 120 gets 120', () => {
    const help = `  --x  ${'word '.repeat(60).trim()}`
    assert.equal(
      Math.max(
        ...fitHelp(help, 20)
          .split('\n')
          .map((l) => l.length)
      ) <= 60,
      true
    )
    const wide = fitHelp(help, 400).split('\n')
    assert.ok(Math.max(...wide.map((l) => l.length)) <= 120 && wide.length > 1)
  })
})
