/**
 * Where the embedded Kafka's jars live and how to get them.
 *
 * `kafka/pom.xml` pins the Kafka version (its `<kafka.version>` property is the single source of truth);
 * `scripts/fetch-kafka.sh` copies the runtime jars with Maven into the git-ignored `.kafka/jars/<version>/`
 * and writes a marker there, so a warm machine never starts Maven again.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ErrorCodes, SqueezeError } from '../errors.js'

const MARKER = '.complete'

let rootCache: string | undefined
let versionCache: string | undefined
let fetching: Promise<string> | undefined

/**
 * The repository root: the nearest folder above this module holding `kafka/pom.xml` (works from lib/ and dist/lib/),
 * or undefined in an installation without one, such as the container image, which cannot start a Kafka of its own.
 */
export function findSqueezeRoot(): string | undefined {
  if (rootCache !== undefined) return rootCache
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(join(dir, 'kafka', 'pom.xml'))) {
      rootCache = dir
      return dir
    }
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

export function squeezeRoot(): string {
  const root = findSqueezeRoot()
  if (root === undefined)
    throw new SqueezeError(ErrorCodes.BROKER_START, `kafka/pom.xml not found above ${fileURLToPath(import.meta.url)}`)
  return root
}

export function kafkaPomPath(): string {
  return join(squeezeRoot(), 'kafka', 'pom.xml')
}

/** The Kafka version pinned by `<kafka.version>` in kafka/pom.xml. */
export function kafkaVersion(): string {
  if (versionCache !== undefined) return versionCache
  const pom = readFileSync(kafkaPomPath(), 'utf8')
  const m = /<kafka\.version>\s*([^<\s]+)\s*<\/kafka\.version>/.exec(pom)
  if (m?.[1] === undefined) {
    throw new SqueezeError(ErrorCodes.BROKER_START, `no <kafka.version> property in ${kafkaPomPath()}`)
  }
  versionCache = m[1]
  return versionCache
}

/** `.kafka/jars/<version>` under the repository root. */
export function kafkaJarsDir(): string {
  return join(squeezeRoot(), '.kafka', 'jars', kafkaVersion())
}

/** The log4j2 configuration shared by the broker and the tools (INFO to `-Dsqueeze.kafka.logFile`, WARN to stderr). */
export function kafkaLog4jConfig(): string {
  return join(squeezeRoot(), 'kafka', 'log4j2.properties')
}

export function kafkaJarsPresent(): boolean {
  return existsSync(join(kafkaJarsDir(), MARKER))
}

/** The `-cp` value: Java's wildcard form, every jar of the folder. Does not check that the jars are there. */
export function javaClasspath(): string {
  return join(kafkaJarsDir(), '*')
}

/** `$JAVA_HOME/bin/java` when JAVA_HOME is set, else `java` from PATH. */
export function javaBinary(): string {
  const home = process.env['JAVA_HOME']
  if (home !== undefined && home !== '') {
    const bin = join(home, 'bin', 'java')
    if (existsSync(bin)) return bin
  }
  return 'java'
}

/**
 * Makes sure the jars are on disk (running scripts/fetch-kafka.sh, hence Maven, only when the marker is
 * missing) and resolves to the classpath. Concurrent calls in one process share one fetch; concurrent
 * processes are serialised by the script's lock.
 */
export function ensureKafkaJars(): Promise<string> {
  if (kafkaJarsPresent()) return Promise.resolve(javaClasspath())
  fetching ??= runFetchScript().finally(() => {
    fetching = undefined
  })
  return fetching
}

function runFetchScript(): Promise<string> {
  const script = join(squeezeRoot(), 'scripts', 'fetch-kafka.sh')
  return new Promise<string>((resolve, reject) => {
    const child = spawn('bash', [script], { cwd: squeezeRoot(), stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err = (err + d).slice(-8000)
    })
    child.on('error', (e) => {
      reject(new SqueezeError(ErrorCodes.BROKER_START, `cannot run ${script}: ${e.message}`, { cause: e }))
    })
    child.on('close', (code, signal) => {
      if (code === 0 && kafkaJarsPresent()) {
        resolve(javaClasspath())
        return
      }
      const tail = err.trim().split('\n').slice(-30).join('\n')
      reject(
        new SqueezeError(
          ErrorCodes.BROKER_START,
          `fetching Kafka ${kafkaVersion()} jars with Maven failed (${script} exited ${code ?? signal}; ` +
            `needs mvn and Maven Central or a warm ~/.m2). Output:\n${tail || out.trim()}`,
          { retriable: true }
        )
      )
    })
  })
}
