/**
 * Runs Kafka's own command-line tools (same jars as the embedded broker) as short-lived JVMs.
 * Class names below were checked against Kafka 4.1.1 by real runs (several tools moved from `kafka.tools`
 * (Scala) to `org.apache.kafka.tools` (Java) between 3.x and 4.x; DumpLogSegments and StorageTool did not).
 */
import { spawn } from 'node:child_process'
import { ErrorCodes, SqueezeError } from '../errors.js'
import { ensureKafkaJars, javaBinary, kafkaLog4jConfig } from './kafka-jars.js'

export const KafkaMainClasses = {
  /** `kafka.Kafka <server.properties>`: the broker/controller. */
  BROKER: 'kafka.Kafka',
  /** `format -t <cluster-id> -c <props> --ignore-formatted`, `random-uuid`. */
  STORAGE_TOOL: 'kafka.tools.StorageTool',
  /** `--files <seg.log> --print-data-log --deep-iteration`: one line per batch with `compresscodec: gzip`. */
  DUMP_LOG_SEGMENTS: 'kafka.tools.DumpLogSegments',
  /** `--bootstrap-server b --topic t --from-beginning --max-messages n --timeout-ms ms`: values on stdout. */
  CONSOLE_CONSUMER: 'org.apache.kafka.tools.consumer.ConsoleConsumer',
  /** `--bootstrap-server b --topic t [--compression-codec gzip]`: one record per stdin line. */
  CONSOLE_PRODUCER: 'org.apache.kafka.tools.ConsoleProducer',
  /** `--topic t --num-records n --record-size s --throughput -1 --producer-props bootstrap.servers=b compression.type=zstd`. */
  PRODUCER_PERFORMANCE: 'org.apache.kafka.tools.ProducerPerformance',
  /** `--bootstrap-server b --describe --topic-list t`: JSON (last stdout line) with per-partition `size`. */
  LOG_DIRS: 'org.apache.kafka.tools.LogDirsCommand',
  /** `--bootstrap-server b --create|--describe|--delete --topic t`. */
  TOPIC_COMMAND: 'org.apache.kafka.tools.TopicCommand',
  /** `--bootstrap-server b --topic t`: `topic:partition:offset` lines. */
  GET_OFFSET_SHELL: 'org.apache.kafka.tools.GetOffsetShell',
  /** `--bootstrap-server b --describe --entity-type topics`: each topic's dynamic configs. */
  CONFIG_COMMAND: 'kafka.admin.ConfigCommand',
  /** `--bootstrap-server b --describe --group g`. */
  CONSUMER_GROUP_COMMAND: 'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand',
  /** `--bootstrap-server b describe --status`: `LeaderId:`, `CurrentVoters: [{"id": 1, …}, …]`. */
  METADATA_QUORUM: 'org.apache.kafka.tools.MetadataQuorumCommand'
} as const

export interface JavaToolOptions {
  /** Kill the JVM and throw a TIMEOUT SqueezeError after this long (default 120 s). */
  timeoutMs?: number
  /** Written to the tool's stdin, which is then closed (stdin is closed immediately without it). */
  input?: Buffer | string
  /** -Xmx in MiB (default 256). */
  heapMb?: number
  /** Extra JVM options, before the main class. */
  jvmArgs?: string[]
  /** Extra environment variables. */
  env?: Record<string, string>
  cwd?: string
}

export interface JavaToolResult {
  stdout: string
  stderr: string
  /** Exit code; null only if the JVM died from a signal. */
  code: number | null
}

/** JVM options for short-lived tools: small heap, fast start (C1 only, serial GC). */
export function toolJvmOptions(heapMb = 256): string[] {
  return [
    `-Xmx${heapMb}m`,
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-Xshare:auto',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${kafkaLog4jConfig()}`
  ]
}

/**
 * Runs `java -cp <kafka jars> <mainClass> <args…>` and collects its output. A non-zero exit code is
 * returned, not thrown (tools such as ConsoleConsumer exit 0 or 1 depending on how they stop); only failing
 * to start Java or the timeout throw.
 */
export async function runKafkaJavaTool(
  mainClass: string,
  args: string[],
  opts: JavaToolOptions = {}
): Promise<JavaToolResult> {
  const classpath = await ensureKafkaJars()
  const timeoutMs = opts.timeoutMs ?? 120_000
  const argv = [...toolJvmOptions(opts.heapMb), ...(opts.jvmArgs ?? []), '-cp', classpath, mainClass, ...args]
  return new Promise<JavaToolResult>((resolve, reject) => {
    const child = spawn(javaBinary(), argv, {
      cwd: opts.cwd,
      env: { ...process.env, ...(opts.env ?? {}) },
      stdio: ['pipe', 'pipe', 'pipe']
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    let timedOut = false
    child.stdout.on('data', (d: Buffer) => out.push(d))
    child.stderr.on('data', (d: Buffer) => err.push(d))
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, timeoutMs)
    child.on('error', (e) => {
      clearTimeout(timer)
      reject(
        new SqueezeError(ErrorCodes.BROKER_START, `cannot start ${javaBinary()} for ${mainClass}: ${e.message}`, {
          cause: e
        })
      )
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      const stdout = Buffer.concat(out).toString('utf8')
      const stderr = Buffer.concat(err).toString('utf8')
      if (timedOut) {
        reject(
          new SqueezeError(
            ErrorCodes.TIMEOUT,
            `${mainClass} ${args.join(' ')} did not finish within ${timeoutMs} ms; stderr tail:\n${tail(stderr, 20)}`,
            { retriable: true }
          )
        )
        return
      }
      resolve({ stdout, stderr, code })
    })
    // A tool that never reads stdin may close it before we finish writing: ignore EPIPE.
    child.stdin.on('error', () => {})
    if (opts.input !== undefined) child.stdin.end(opts.input)
    else child.stdin.end()
  })
}

function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n')
}
