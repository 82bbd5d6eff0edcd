import { pino, type Logger, type LevelWithSilent } from 'pino'

export type { Logger } from 'pino'

export interface LoggerOptions {
  level?: LevelWithSilent
  /** File descriptor for the JSON lines; 2 (stderr) by default so a command's report on stdout stays clean. */
  fd?: number
  name?: string
}

/** One root logger per process, built by the entry point; components take child loggers. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const destination = pino.destination({ fd: options.fd ?? 2, sync: true })
  // A write that fails (the log's reader gone, a full disk) is an 'error' event: with no listener it would kill the
  // process mid-run, and a command's work matters more than its log lines.
  destination.on('error', () => undefined)
  return pino(
    {
      name: options.name ?? 'squeeze',
      level: options.level ?? 'info',
      base: { pid: process.pid },
      // Credentials must never reach a log line, wherever a careless caller puts them.
      redact: {
        paths: ['password', '*.password', 'sasl.password', '*.sasl.password', 'ssl.key', '*.ssl.key'],
        censor: '[redacted]'
      }
    },
    destination
  )
}
