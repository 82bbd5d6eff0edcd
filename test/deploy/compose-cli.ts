/**
 * Docker Compose v2 run on the project's docker-compose.yml, as users run it: `docker compose` is the CLI plugin that
 * scripts/compose-v2.sh builds from its Go module and installs (scripts/test.sh runs it).
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ROOT } from './manifests.js'

const run = promisify(execFile)

export const COMPOSE_FILE = join(ROOT, 'docker-compose.yml')

export interface DockerOptions {
  env?: NodeJS.ProcessEnv
  timeoutMs?: number
}

/** `docker ARGS`, stdout; a failure names the command and carries docker's output. */
export async function docker(args: string[], { env = process.env, timeoutMs = 120_000 }: DockerOptions = {}) {
  try {
    const { stdout } = await run('docker', args, { env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 })
    return stdout.trim()
  } catch (e) {
    // A failed build says why on stdout (the step's output), Compose and a failed run on stderr.
    const err = e as { stdout?: string; stderr?: string; message: string }
    const said = `${(err.stdout ?? '').slice(-4000)}\n${(err.stderr ?? '').slice(-8000)}`.trim()
    throw new Error(`docker ${args.slice(0, 6).join(' ')} … failed: ${said || err.message}`, { cause: e })
  }
}

/** True when a Docker engine answers within a few seconds. */
export async function dockerAnswers(): Promise<boolean> {
  return docker(['version', '--format', '{{.Server.Version}}'], { timeoutMs: 10_000 }).then(
    () => true,
    () => false
  )
}

/** The Compose plugin's version, or a clear error naming the script that installs it. */
export async function composeVersion(): Promise<string> {
  try {
    return await docker(['compose', 'version', '--short'], { timeoutMs: 30_000 })
  } catch (e) {
    throw new Error('`docker compose` is not installed: run scripts/compose-v2.sh (scripts/test.sh does)', { cause: e })
  }
}

/** A service of `docker compose config --format json`: the file as Compose resolves it (anchors, variables). */
export interface ComposeServiceConfig {
  image?: string
  command?: string[]
  environment?: Record<string, string | null>
  profiles?: string[]
}

export interface ComposeConfig {
  name: string
  services: Record<string, ComposeServiceConfig>
}

/** The project's file as Compose reads it with `env`; rejects with Compose's own message when it refuses the file. */
export async function composeConfig(env: NodeJS.ProcessEnv = process.env, profiles: string[] = []) {
  const args = ['compose', '--file', COMPOSE_FILE, ...profiles.flatMap((p) => ['--profile', p])]
  return JSON.parse(await docker([...args, 'config', '--format', 'json'], { env })) as ComposeConfig
}

/** A row of `docker compose ps --all --format json`. */
export interface ComposeContainer {
  Name: string
  Service: string
  State: string
  Health: string
  ExitCode: number
}

/** Parses `docker compose ps --format json`: one object per line, or one array (older releases). */
export function parseComposePs(stdout: string): ComposeContainer[] {
  if (stdout.startsWith('[')) return JSON.parse(stdout) as ComposeContainer[]
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as ComposeContainer)
}

/**
 * What the test machines need on top of the project's file, and nothing else: no ports published on the host (the
 * host reaches the containers over their bridge network; a fixed host port may be taken by another broker or
 * project on the machine), and the image's build on the host's network (the engine scripts/docker-engine.sh starts
 * forwards no container traffic off the machine, so `npm ci` in the build reaches the registry only from there).
 */
export const TEST_OVERRIDE = `services:
  kafka-1: { ports: !reset [] }
  kafka-2: { ports: !reset [] }
  kafka-3: { ports: !reset [] }
  prometheus: { ports: !reset [] }
  grafana: { ports: !reset [] }
  producer: { build: { network: host } }
  copier: { build: { network: host } }
  consumer: { build: { network: host } }
`

/** One Compose project of the project's file under a name of its own, with the override file at `override`. */
export class ComposeProject {
  constructor(
    readonly name: string,
    private readonly override: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly profiles: string[] = []
  ) {}

  /** `docker compose ARGS` on this project. */
  compose(args: string[], timeoutMs = 120_000): Promise<string> {
    const project = ['--project-name', this.name, '--file', COMPOSE_FILE, '--file', this.override]
    const profiles = this.profiles.flatMap((p) => ['--profile', p])
    return docker(['compose', ...project, ...profiles, '--ansi', 'never', '--progress', 'plain', ...args], {
      env: this.env,
      timeoutMs
    })
  }

  /** Every container of the project, running or exited. */
  async containers(): Promise<ComposeContainer[]> {
    return parseComposePs(await this.compose(['ps', '--all', '--format', 'json']))
  }

  async container(service: string): Promise<ComposeContainer> {
    const found = (await this.containers()).find((c) => c.Service === service)
    if (found === undefined) throw new Error(`${this.name} has no container of ${service}`)
    return found
  }

  /** The service's address on the project's default network (the host reaches it over the bridge). */
  async address(service: string): Promise<string> {
    const { Name } = await this.container(service)
    const network = `${this.name}_default`
    const ip = await docker([
      'inspect',
      '--format',
      `{{ (index .NetworkSettings.Networks "${network}").IPAddress }}`,
      Name
    ])
    if (ip === '') throw new Error(`${Name} has no address on ${network}`)
    return ip
  }

  /** The last lines of every service's log, for a failure message. */
  logs(): Promise<string> {
    return this.compose(['logs', '--no-color', '--tail', '30']).catch((e: Error) => e.message)
  }

  /** `docker compose down --volumes`: containers, networks and volumes of the project go. */
  async down(): Promise<void> {
    await this.compose(['down', '--volumes', '--remove-orphans', '--timeout', '10'], 300_000)
  }
}
