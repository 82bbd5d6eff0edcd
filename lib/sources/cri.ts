import type { RecordHeader } from '../protocol/record.js'
import type { SourceItem } from './source.js'

/** `TIMESTAMP STREAM TAG MESSAGE`: the CRI log format kubelet writes under /var/log/containers. */
const CRI_LINE = /^(\S+) (stdout|stderr) ([FP])(?:\S*) ?/

/**
 * CRI log lines into messages: partial lines (tag P) are held and joined with the next until a full one (F), up
 * to `maxBytes` (a longer message is handed on as it is, and `onSplit` called). Each message is a record with the
 * line's time; a line that is not CRI is its own message, whole.
 */
export class CriJoiner {
  private parts: Buffer[] = []
  private partsBytes = 0
  /** Input bytes of the partial lines held: a read position stays before them until their message is handed on. */
  pendingBytes = 0

  constructor(
    private readonly maxBytes: number,
    private readonly onSplit?: () => void
  ) {}

  /** The message `line` completes, if any; `consumed` is the line's bytes in the file. */
  push(line: Buffer, consumed: number): SourceItem | null {
    const text = line.toString('latin1', 0, Math.min(line.length, 64))
    const match = CRI_LINE.exec(text)
    if (match === null) return this.message(line, undefined)
    const body = line.subarray(match[0].length)
    const time = Date.parse(match[1] as string)
    const timestampMs = Number.isNaN(time) ? undefined : time
    if (match[3] === 'F') return this.message(body, timestampMs)
    this.parts.push(body)
    this.partsBytes += body.length
    this.pendingBytes += consumed
    if (this.partsBytes < this.maxBytes) return null
    this.onSplit?.()
    return this.message(Buffer.alloc(0), timestampMs)
  }

  /** The partial lines held, as a message: the file ended (released) without their full line. */
  flush(): SourceItem | null {
    return this.parts.length === 0 ? null : this.message(Buffer.alloc(0), undefined)
  }

  private message(body: Buffer, timestampMs: number | undefined): SourceItem {
    const value = this.parts.length === 0 ? body : Buffer.concat([...this.parts, body])
    this.parts = []
    this.partsBytes = 0
    this.pendingBytes = 0
    return { kind: 'record', key: null, value, ...(timestampMs === undefined ? {} : { timestampMs }) }
  }
}

/**
 * Namespace, pod and container from a /var/log/containers file name (`POD_NAMESPACE_CONTAINER-ID.log`) as
 * headers; none for a name of another shape.
 */
export function criHeaders(path: string): RecordHeader[] {
  const name = path.slice(path.lastIndexOf('/') + 1)
  const match = /^([^_]+)_([^_]+)_(.+)-[0-9a-f]{64}\.log$/.exec(name)
  if (match === null) return []
  return [
    { key: 'squeeze.k8s.namespace', value: Buffer.from(match[2] as string) },
    { key: 'squeeze.k8s.pod', value: Buffer.from(match[1] as string) },
    { key: 'squeeze.k8s.container', value: Buffer.from(match[3] as string) }
  ]
}
