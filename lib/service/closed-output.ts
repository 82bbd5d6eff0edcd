import type { EventEmitter } from 'node:events'

/**
 * Errors a write to a pipe or terminal gets once whatever read it has gone: `squeeze produce ... | head`, a log
 * collector restarting, an ssh session closing under a shipper run with nohup.
 */
const GONE_READER = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED', 'EIO'])

/**
 * Keeps a command running when the reader of its stdout or stderr goes away. Node fails the next write to such a
 * stream with an 'error' event which, with no listener, kills the process with a stack trace: a producer would then
 * exit before flushing the records it accepted. The command carries on without that output instead: its records
 * still reach Kafka and its exit code still says how it went. Any other write error (a full disk under a redirect)
 * is said once on the other stream, if that one still has a reader.
 */
export function outliveClosedOutput(
  streams: { readonly stdout: EventEmitter; readonly stderr: NodeJS.WritableStream & EventEmitter } = process
): void {
  let told = false
  const listen = (stream: EventEmitter, other: NodeJS.WritableStream | undefined, name: string): void => {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (GONE_READER.has(err.code ?? '') || told || other === undefined) return
      told = true
      try {
        other.write(`squeeze: writing to ${name} failed (${err.message}); carrying on without it\n`)
      } catch {
        // The other stream is gone too: nothing is left to say it on.
      }
    })
  }
  listen(streams.stdout, streams.stderr, 'stdout')
  listen(streams.stderr, undefined, 'stderr')
}
