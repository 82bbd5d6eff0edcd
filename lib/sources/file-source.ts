import { createReadStream } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
import type { SourceItem } from './source.js'

export interface FileSourceOptions {
  /** Keep reading as the file grows, and reopen it when it is rotated or truncated (tail -F). */
  readonly follow: boolean
  readonly pollMs?: number
  readonly signal?: AbortSignal
}

/** Lines of a file, read once or followed. */
export async function* readFileLines(path: string, options: FileSourceOptions): AsyncGenerator<SourceItem> {
  try {
    await stat(path)
  } catch (err) {
    throw new SqueezeError(ErrorCodes.SOURCE, `cannot read ${path}: ${errorMessage(err)}`, { cause: err })
  }
  if (!options.follow) {
    const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity })
    for await (const line of lines) {
      if (options.signal?.aborted === true) return
      yield { kind: 'line', line }
    }
    return
  }
  yield* followLines(path, options)
}

async function* followLines(path: string, options: FileSourceOptions): AsyncGenerator<SourceItem> {
  const pollMs = options.pollMs ?? 250
  let handle = await open(path, 'r')
  let inode = (await handle.stat()).ino
  let position = 0
  let pending = ''
  const chunk = Buffer.allocUnsafe(256 * 1024)
  try {
    while (options.signal?.aborted !== true) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, position)
      if (bytesRead > 0) {
        position += bytesRead
        pending += chunk.toString('utf8', 0, bytesRead)
        const lines = pending.split('\n')
        pending = lines.pop() ?? ''
        for (const line of lines) yield { kind: 'line', line: line.endsWith('\r') ? line.slice(0, -1) : line }
        continue
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs))
      const current = await stat(path).catch(() => undefined)
      if (current === undefined) continue // rotated away; wait for the new file
      if (current.ino !== inode || current.size < position) {
        // Rotated (new inode) or truncated: finish the old partial line, start the new file from its beginning.
        if (pending !== '') yield { kind: 'line', line: pending }
        pending = ''
        await handle.close()
        handle = await open(path, 'r')
        inode = (await handle.stat()).ino
        position = 0
      }
    }
  } finally {
    await handle.close()
  }
}

/** Lines from standard input until it closes. */
export async function* readStdinLines(signal?: AbortSignal): AsyncGenerator<SourceItem> {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of lines) {
    if (signal?.aborted === true) return
    yield { kind: 'line', line }
  }
}
