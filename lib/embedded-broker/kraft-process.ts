/**
 * The embedded broker's JVM process: spawn, readiness (a metadata answer from this cluster and node), the watchdog
 * that ends the JVM with this Node process, the log tails a failed start reports, and stop, restart, halt, kill
 * and resume. kraft-config.ts writes the configuration it runs.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs'
import kafkajs from 'kafkajs'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
// Fixes kafkajs's request-queue timer before the probe below opens a connection (a process may load no other
// kafka module).
import '../kafka/kafkajs-internals.js'
import { retry } from '../retry.js'
import { javaBinary } from './kafka-jars.js'
import { SQUEEZE_CLUSTER_ID } from './kraft-config.js'

const { Kafka, logLevel } = kafkajs

// ---------------------------------------------------------------------------------------------------------------
// Safety nets. The library installs no process or signal handler: the process owner (a service's main, a test
// harness) decides the shutdown order, e.g. compare still reads from the broker after Ctrl-C to print its partial
// report. What the library does guarantee is that no JVM outlives this Node process (the watchdog below).

interface LiveBroker {
  child: ChildProcess
  watchdog?: ChildProcess
  /** Removed with the JVM on exit; unset for a caller's dir or SQUEEZE_KEEP_BROKER_DATA=1. */
  tempDir?: string
}
const live = new Set<LiveBroker>()
let killOnExitInstalled = false

function killAllNow(): void {
  for (const b of live) {
    try {
      b.child.kill('SIGKILL')
    } catch {
      /* already gone */
    }
    try {
      if (b.tempDir !== undefined) rmSync(b.tempDir, { recursive: true, force: true })
    } catch {
      /* best effort: the watchdog tries again once this process is gone */
    }
  }
  live.clear()
}

/**
 * For the process owner: SIGKILL every embedded JVM still running when this process exits (process.exit, an
 * uncaught error, the end of a test file). Idempotent. A watchdog still ends a JVM whose parent was killed.
 */
export function killEmbeddedBrokersOnExit(): void {
  if (killOnExitInstalled) return
  killOnExitInstalled = true
  process.on('exit', killAllNow)
}

/**
 * A tiny detached shell that SIGKILLs the JVM, and removes its temp data dir, if this Node process disappears
 * without stopping it (SIGKILLed by a test runner's timeout, a signal nobody handled). It ends by itself once the
 * JVM is gone; it never removes the dir while Node lives, since halt() keeps it for resume().
 */
function startWatchdog(jvmPid: number, tempDir: string | undefined): ChildProcess | undefined {
  try {
    const w = spawn(
      'bash',
      [
        '-c',
        'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 2; done; ' +
          'if ! kill -0 "$1" 2>/dev/null; then kill -9 "$2" 2>/dev/null; if [ -n "$3" ]; then rm -rf "$3"; fi; fi; exit 0',
        'squeeze-kafka-watchdog',
        String(process.pid),
        String(jvmPid),
        tempDir ?? ''
      ],
      { detached: true, stdio: 'ignore' }
    )
    w.on('error', () => {})
    w.unref()
    return w
  } catch {
    return undefined
  }
}

function fileTail(path: string, lines: number): string {
  try {
    const text = readFileSync(path, 'utf8')
    return text.trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return `(no ${path})`
  }
}

/** The first ERROR/FATAL lines of a log4j file: after a failed start the tail is mostly shutdown noise. */
function firstErrors(path: string, max: number): string {
  try {
    const lines = readFileSync(path, 'utf8').split('\n')
    const errors = lines.filter((l) => /^\[[^\]]+\] (ERROR|FATAL) /.test(l)).slice(0, max)
    return errors.length > 0 ? errors.join('\n') : '(none)'
  } catch {
    return `(no ${path})`
  }
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true)
  return new Promise<boolean>((res) => {
    const t = setTimeout(() => {
      child.removeListener('exit', onExit)
      res(false)
    }, ms)
    const onExit = (): void => {
      clearTimeout(t)
      res(true)
    }
    child.once('exit', onExit)
  })
}

/** One metadata round trip with kafkajs and no retries of its own: the callers retry with lib/retry.ts. */
export async function describeClusterOnce(
  brokers: string[],
  timeouts: { connectionTimeout: number; requestTimeout: number }
): Promise<{ clusterId: string; brokers: Array<{ nodeId: number }> }> {
  const admin = new Kafka({
    clientId: 'squeeze-broker-probe',
    brokers,
    logLevel: logLevel.NOTHING,
    ...timeouts,
    retry: { retries: 0 }
  }).admin({ retry: { retries: 0 } })
  try {
    await admin.connect()
    return await admin.describeCluster()
  } finally {
    await admin.disconnect().catch(() => {})
  }
}

/** Removes a data dir the broker made itself, unless SQUEEZE_KEEP_BROKER_DATA=1 asks to keep it. */
export function removeOwnedDir(dataDir: string, ownsDir: boolean): void {
  if (ownsDir && process.env['SQUEEZE_KEEP_BROKER_DATA'] !== '1') rmSync(dataDir, { recursive: true, force: true })
}

/** What a broker's JVM runs with, and where it keeps its files. */
export interface JvmSpec {
  readonly jvmArgs: readonly string[]
  readonly dataDir: string
  /** True when the broker made dataDir (a temp dir), which it then removes on stop. */
  readonly ownsDir: boolean
  readonly logFile: string
  readonly jvmOut: string
  readonly bootstrap: string
  readonly nodeId: number
  readonly version: string
  readonly startTimeoutMs: number
  readonly stopTimeoutMs: number
}

/** One broker's JVM across its life: started, stopped for good, or halted, killed and resumed on the same ports. */
export class BrokerProcess {
  private current: LiveBroker | undefined
  private stopping: Promise<void> | undefined
  private restarting: Promise<void> | undefined

  constructor(private readonly spec: JvmSpec) {}

  /** Launches the JVM and waits until it serves metadata; on failure stops it and removes an owned data dir. */
  async start(): Promise<void> {
    try {
      await this.launchReady()
    } catch (e) {
      removeOwnedDir(this.spec.dataDir, this.spec.ownsDir)
      throw e
    }
  }

  pid(): number | undefined {
    const current = this.current
    return current !== undefined && current.child.exitCode === null ? current.child.pid : undefined
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.restarting?.catch(() => {})
      if (this.current !== undefined) await this.terminate(this.current)
      this.current = undefined
      removeOwnedDir(this.spec.dataDir, this.spec.ownsDir)
    })()
    return this.stopping
  }

  restart(): Promise<void> {
    if (this.stopping !== undefined) {
      const message = `embedded Kafka at ${this.spec.bootstrap} was stopped; cannot restart`
      return Promise.reject(new SqueezeError(ErrorCodes.BROKER_START, message))
    }
    this.restarting ??= (async () => {
      if (this.current !== undefined) await this.terminate(this.current)
      await this.launchReady()
    })().finally(() => {
      this.restarting = undefined
    })
    return this.restarting
  }

  async halt(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    if (this.current !== undefined) await this.terminate(this.current, signal)
    this.current = undefined
  }

  async resume(): Promise<void> {
    if (this.stopping !== undefined) {
      throw new SqueezeError(
        ErrorCodes.BROKER_START,
        `embedded Kafka at ${this.spec.bootstrap} was stopped; cannot resume`
      )
    }
    if (this.current !== undefined) return
    await this.launchReady()
  }

  /** Launches the JVM and waits until it serves metadata; one that does not is stopped before the error is thrown. */
  private async launchReady(): Promise<void> {
    const entry = this.launch()
    this.current = entry
    try {
      await this.waitReady(entry)
    } catch (e) {
      await this.terminate(entry)
      this.current = undefined
      throw e
    }
  }

  private launch(): LiveBroker {
    const { dataDir, jvmOut } = this.spec
    const fd = openSync(jvmOut, 'a')
    let child: ChildProcess
    try {
      // Its own process group: a terminal's Ctrl-C goes to the owner, which decides when the broker stops.
      child = spawn(javaBinary(), this.spec.jvmArgs, { cwd: dataDir, stdio: ['ignore', fd, fd], detached: true })
    } finally {
      closeSync(fd)
    }
    child.on('error', () => {}) // surfaced through waitReady (exitCode / spawn failure below)
    child.unref()
    const tempDir = this.spec.ownsDir && process.env['SQUEEZE_KEEP_BROKER_DATA'] !== '1' ? dataDir : undefined
    const entry: LiveBroker = { child, ...(tempDir === undefined ? {} : { tempDir }) }
    if (child.pid !== undefined) {
      const w = startWatchdog(child.pid, tempDir)
      if (w !== undefined) entry.watchdog = w
    }
    live.add(entry)
    return entry
  }

  private failure(why: string, cause?: unknown): SqueezeError {
    const { version, bootstrap, dataDir, logFile, jvmOut } = this.spec
    return new SqueezeError(
      ErrorCodes.BROKER_START,
      `embedded Kafka ${version} at ${bootstrap} ${why} (data dir ${dataDir}).\n` +
        `--- server.log (first errors) ---\n${firstErrors(logFile, 8)}\n` +
        `--- server.log (tail) ---\n${fileTail(logFile, 25)}\n--- jvm.out (tail) ---\n${fileTail(jvmOut, 20)}`,
      { retriable: true, cause }
    )
  }

  private async waitReady(entry: LiveBroker): Promise<void> {
    const { bootstrap, nodeId, startTimeoutMs } = this.spec
    let spawnError: Error | undefined
    entry.child.once('error', (e) => {
      spawnError = e
    })
    const isStartFailure = (err: unknown): boolean =>
      err instanceof SqueezeError && err.code === ErrorCodes.BROKER_START
    try {
      await retry(
        async () => {
          if (spawnError !== undefined) {
            throw this.failure(`could not start ${javaBinary()}: ${spawnError.message}`, spawnError)
          }
          const { exitCode, signalCode } = entry.child
          if (exitCode !== null || signalCode !== null)
            throw this.failure(`exited during startup (${exitCode ?? signalCode})`)
          const cluster = await describeClusterOnce([bootstrap], { connectionTimeout: 1000, requestTimeout: 3000 })
          // Another broker on a port we were told is free (a leftover) must not pass for ours.
          if (cluster.clusterId !== SQUEEZE_CLUSTER_ID || !cluster.brokers.some((b) => b.nodeId === nodeId)) {
            throw new Error(`answered as cluster ${cluster.clusterId}`)
          }
        },
        {
          deadlineMs: startTimeoutMs,
          initialDelayMs: 250,
          maxDelayMs: 1000,
          shouldRetry: (err) => !isStartFailure(err)
        }
      )
    } catch (err) {
      if (isStartFailure(err)) throw err
      throw this.failure(`did not answer a metadata request within ${startTimeoutMs} ms: ${errorMessage(err)}`, err)
    }
  }

  private async terminate(entry: LiveBroker, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const { child } = entry
    // pid undefined: spawn itself failed, there is nothing to signal or wait for.
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill(signal)
      if (!(await waitForExit(child, signal === 'SIGKILL' ? 10_000 : this.spec.stopTimeoutMs))) {
        child.kill('SIGKILL')
        await waitForExit(child, 10_000)
      }
    }
    entry.watchdog?.kill('SIGKILL')
    live.delete(entry)
  }
}
