import type { SourceItem } from '../sources/source.js'

/**
 * The first `max` lines of a stream (fewer if it ends first), and the stream again from its start: the peeked
 * items are replayed before the rest, so nothing read for a look is lost.
 */
export async function peekLines(
  items: AsyncIterable<SourceItem>,
  max: number
): Promise<{ lines: string[]; items: AsyncIterable<SourceItem> }> {
  const iterator = items[Symbol.asyncIterator]()
  const head: SourceItem[] = []
  const lines: string[] = []
  let done = false
  while (lines.length < max) {
    const next = await iterator.next()
    if (next.done === true) {
      done = true
      break
    }
    head.push(next.value)
    if (next.value.kind === 'line' && next.value.line.trim() !== '') lines.push(next.value.line)
  }
  async function* replay(): AsyncGenerator<SourceItem> {
    yield* head
    if (done) return
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) yield next.value
  }
  return { lines, items: replay() }
}
