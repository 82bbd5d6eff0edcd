import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { paretoFront } from '../../../lib/compare/pareto.js'
import { renderCompareSvg } from '../../../lib/report/compare-svg.js'
import { sampleReport, SAMPLE_TARGETS, target } from '../compare/sample-report.js'

interface XmlElement {
  readonly name: string
  readonly attrs: Readonly<Record<string, string>>
  readonly children: XmlElement[]
  text: string
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

/**
 * A strict little XML reader, enough to prove well-formedness: one root, every tag closed in order, quoted
 * and unique attributes, no bare `<` or `&` in text or attribute values. Throws on the first violation.
 */
function parseXml(xml: string): XmlElement {
  const stack: XmlElement[] = []
  let root: XmlElement | undefined
  let i = 0
  const fail = (why: string): never => {
    throw new Error(`not well-formed at ${i}: ${why}`)
  }
  const isNameChar = (c: string): boolean =>
    (c >= 'a' && c <= 'z') ||
    (c >= 'A' && c <= 'Z') ||
    (c >= '0' && c <= '9') ||
    c === '-' ||
    c === '_' ||
    c === ':' ||
    c === '.'
  const readName = (): string => {
    const start = i
    while (i < xml.length && isNameChar(xml[i]!)) i++
    if (i === start) fail('expected a name')
    return xml.slice(start, i)
  }
  const skipSpace = (): void => {
    while (i < xml.length && ' \n\t\r'.includes(xml[i]!)) i++
  }
  const decode = (raw: string): string => {
    let out = ''
    for (let j = 0; j < raw.length; j++) {
      const c = raw[j]!
      if (c === '<') fail('bare < in content')
      if (c !== '&') {
        out += c
        continue
      }
      const end = raw.indexOf(';', j)
      const entity = end === -1 ? undefined : ENTITIES[raw.slice(j + 1, end)]
      if (entity === undefined) fail(`bare & or unknown entity in "${raw}"`)
      out += entity
      j = end
    }
    return out
  }
  while (i < xml.length) {
    if (xml[i] !== '<') {
      const end = xml.indexOf('<', i)
      const text = decode(xml.slice(i, end === -1 ? xml.length : end))
      if (stack.length === 0 && text.trim() !== '') fail('text outside the root element')
      const top = stack[stack.length - 1]
      if (top !== undefined) top.text += text
      i = end === -1 ? xml.length : end
      continue
    }
    i++
    if (xml[i] === '/') {
      i++
      const name = readName()
      skipSpace()
      if (xml[i] !== '>') fail('expected > after a closing tag')
      i++
      const open = stack.pop()
      if (open?.name !== name) fail(`</${name}> closes <${open?.name ?? 'nothing'}>`)
      continue
    }
    const name = readName()
    const attrs: Record<string, string> = {}
    for (;;) {
      skipSpace()
      if (xml.startsWith('/>', i) || xml[i] === '>') break
      const attr = readName()
      if (Object.hasOwn(attrs, attr)) fail(`duplicate attribute ${attr}`)
      if (xml[i] !== '=' || xml[i + 1] !== '"') fail(`attribute ${attr} is not ="quoted"`)
      const end = xml.indexOf('"', i + 2)
      if (end === -1) fail('unterminated attribute value')
      attrs[attr] = decode(xml.slice(i + 2, end))
      i = end + 1
    }
    const element: XmlElement = { name, attrs, children: [], text: '' }
    const parent = stack[stack.length - 1]
    if (parent !== undefined) parent.children.push(element)
    else if (root === undefined) root = element
    else fail('a second root element')
    if (xml.startsWith('/>', i)) i += 2
    else {
      i++
      stack.push(element)
    }
  }
  if (stack.length > 0) fail(`<${stack[stack.length - 1]!.name}> is never closed`)
  if (root === undefined) return fail('no root element')
  return root
}

function all(element: XmlElement, name: string): XmlElement[] {
  return [...(element.name === name ? [element] : []), ...element.children.flatMap((c) => all(c, name))]
}

describe('renderCompareSvg', () => {
  const report = sampleReport()
  const svg = parseXml(renderCompareSvg(report))

  it('is a well-formed standalone SVG document with a title', () => {
    assert.equal(svg.name, 'svg')
    assert.equal(svg.attrs.xmlns, 'http://www.w3.org/2000/svg')
    assert.ok(all(svg, 'title')[0]?.text.includes('prod.access-logs'))
    assert.throws(() => parseXml('<svg><g></svg>'), /closes <g>/)
    assert.throws(() => parseXml('<svg><text>a & b</text></svg>'), /bare &/)
  })

  it('has exactly one point and one label per target, labelled with the target', () => {
    const circles = all(svg, 'circle').filter((c) => c.attrs.class === 'target')
    assert.equal(circles.length, SAMPLE_TARGETS.length)
    assert.equal(all(svg, 'circle').length, SAMPLE_TARGETS.length)
    const labels = all(svg, 'text')
      .filter((t) => t.attrs.class === 'label')
      .map((t) => t.text)
    assert.deepEqual(
      labels,
      SAMPLE_TARGETS.map((t) => t.target)
    )
  })

  it('places points by the data: more ratio is higher up, more CPU is further right', () => {
    const at = (name: string): { x: number; y: number } => {
      const i = SAMPLE_TARGETS.findIndex((t) => t.target === name)
      const c = all(svg, 'circle')[i]!
      return { x: Number(c.attrs.cx), y: Number(c.attrs.cy) }
    }
    assert.ok(at('zstd:19').y < at('zstd:3').y)
    assert.ok(at('zstd:3').y < at('lz4:1').y)
    assert.ok(at('zstd:19').x > at('gzip:9').x)
    assert.ok(at('gzip:9').x > at('zstd:3').x)
    assert.ok(at('none').x < at('lz4:1').x)
  })

  it('draws the Pareto front as one polyline through exactly the front points, cheapest first', () => {
    const lines = all(svg, 'polyline').filter((p) => p.attrs.class === 'pareto')
    assert.equal(lines.length, 1)
    const circles = all(svg, 'circle')
    const expected = paretoFront(SAMPLE_TARGETS).map((t) => {
      const c = circles[SAMPLE_TARGETS.indexOf(t)]!
      return `${c.attrs.cx},${c.attrs.cy}`
    })
    assert.deepEqual(lines[0]!.attrs.points?.split(' '), expected)
  })

  it('has both axes titled, with ticks, and a log x axis when CPU spans more than 10x', () => {
    const texts = all(svg, 'text').map((t) => t.text)
    assert.ok(texts.includes('compress CPU seconds per GiB (log scale)'))
    assert.ok(texts.some((t) => t.startsWith('compression ratio')))
    for (const tick of ['0', '1', '10', '100', '1000']) assert.ok(texts.includes(tick), `x tick ${tick}`)
    assert.ok(texts.some((t) => /^\d+x$/.test(t)))

    const narrow = parseXml(renderCompareSvg(sampleReport([target('zstd:1', 9e6, 2), target('zstd:3', 8e6, 3)])))
    const narrowTexts = all(narrow, 'text').map((t) => t.text)
    assert.ok(narrowTexts.includes('compress CPU seconds per GiB'))
    assert.ok(narrowTexts.includes('0'))
  })

  it('escapes names so hostile topics and targets stay text', () => {
    const hostile = target('zstd:3', 8e6, 3, { target: '<zstd & "3">' })
    const doc = parseXml(
      renderCompareSvg({ ...sampleReport([hostile]), source: { ...report.source, topic: "a<b>&'c" } })
    )
    assert.deepEqual(
      all(doc, 'text')
        .filter((t) => t.attrs.class === 'label')
        .map((t) => t.text),
      ['<zstd & "3">']
    )
    assert.ok(all(doc, 'title')[0]?.text.includes("a<b>&'c"))
  })
})
