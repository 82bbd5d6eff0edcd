/**
 * Runs docker-compose.yml's services with the plain docker CLI (Compose v2 is not installable here, and
 * Debian's docker-compose 1.29 rejects the file's top-level `name`): image, command, entrypoint, environment,
 * hostname, volumes and the hardening options come from the compose file, so the test runs what users run.
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { isObject, loadYaml, ROOT, type Json, type JsonObject } from './manifests.js'

const run = promisify(execFile)

export const COMPOSE_FILE = join(ROOT, 'docker-compose.yml')

/** `docker ARGS`, stdout; a failure names the command and carries docker's stderr. */
export async function docker(args: string[], timeoutMs = 120_000): Promise<string> {
  try {
    const { stdout } = await run('docker', args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 })
    return stdout.trim()
  } catch (e) {
    // A failed build says why on stdout (the step's output), a failed run on stderr.
    const err = e as { stdout?: string; stderr?: string; message: string }
    const said = `${(err.stdout ?? '').slice(-4000)}\n${err.stderr ?? ''}`.trim()
    throw new Error(`docker ${args.slice(0, 3).join(' ')} … failed: ${said || err.message}`, { cause: e })
  }
}

/** True when a Docker engine answers within a few seconds. */
export async function dockerAnswers(): Promise<boolean> {
  return docker(['version', '--format', '{{.Server.Version}}'], 10_000).then(
    () => true,
    () => false
  )
}

/**
 * Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?message}` interpolation from `env`: the last refuses an unset
 * or empty variable with its message, as Compose refuses to start.
 */
export function interpolate(value: string, env: NodeJS.ProcessEnv = process.env): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-?])([^}]*))?\}/g,
    (_, name: string, kind: string | undefined, text: string | undefined) => {
      const set = env[name]
      if (set !== undefined && set !== '') return set
      if (kind === '?') throw new Error(`required variable ${name} is missing a value: ${text ?? ''}`)
      return kind === '-' ? (text ?? '') : ''
    }
  )
}

export interface ComposeService {
  readonly name: string
  readonly image: string
  readonly command: string[]
  readonly entrypoint: string[]
  readonly environment: Record<string, string>
  readonly hostname: string
  readonly volumes: string[]
  readonly readOnly: boolean
  readonly capDrop: string[]
  readonly securityOpt: string[]
  /** Compose's healthcheck test: ["CMD", ...] or ["CMD-SHELL", "..."]. */
  readonly healthcheck: string[]
  readonly stopGraceSeconds: number
}

/** The compose file's services, anchors and `<<` merges resolved. */
export function composeServices(env: NodeJS.ProcessEnv = process.env): Map<string, ComposeService> {
  const strings = (value: Json | undefined): string[] => {
    if (value === undefined || value === null) return []
    return (Array.isArray(value) ? value : [value]).map((v) => interpolate(String(v), env))
  }
  const doc = loadYaml(COMPOSE_FILE)
  if (!isObject(doc) || !isObject(doc.services)) throw new Error(`${COMPOSE_FILE}: no services`)
  const out = new Map<string, ComposeService>()
  for (const [name, raw] of Object.entries(doc.services)) {
    if (!isObject(raw)) continue
    const s: JsonObject = raw
    const environment: Record<string, string> = {}
    if (isObject(s.environment))
      for (const [k, v] of Object.entries(s.environment)) environment[k] = interpolate(String(v), env)
    else
      for (const kv of strings(s.environment)) environment[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1)
    const grace = /^(\d+)s$/.exec(String(s.stop_grace_period ?? '10s'))
    out.set(name, {
      name,
      image: interpolate(String(s.image ?? ''), env),
      command: strings(s.command),
      entrypoint: strings(s.entrypoint),
      environment,
      hostname: typeof s.hostname === 'string' ? s.hostname : name,
      volumes: strings(s.volumes),
      readOnly: s.read_only === true,
      capDrop: strings(s.cap_drop),
      securityOpt: strings(s.security_opt),
      healthcheck: isObject(s.healthcheck) ? strings(s.healthcheck.test) : [],
      stopGraceSeconds: grace === null ? 10 : Number(grace[1])
    })
  }
  return out
}

export function composeService(name: string, env: NodeJS.ProcessEnv = process.env): ComposeService {
  const s = composeServices(env).get(name)
  if (s === undefined) throw new Error(`${COMPOSE_FILE} has no service ${name}`)
  return s
}

/** `docker run -d` of a compose service on `network`, reachable there under its service name and hostname. */
export async function runService(
  s: ComposeService,
  network: string,
  containerName: string,
  label: string
): Promise<string> {
  const args = [
    'run',
    '-d',
    '--name',
    containerName,
    '--label',
    label,
    '--network',
    network,
    '--network-alias',
    s.name,
    '--hostname',
    s.hostname
  ]
  if (s.hostname !== s.name) args.push('--network-alias', s.hostname)
  for (const [k, v] of Object.entries(s.environment)) args.push('-e', `${k}=${v}`)
  for (const v of s.volumes) args.push('-v', v.startsWith('./') ? join(ROOT, v) : v)
  if (s.readOnly) args.push('--read-only')
  for (const c of s.capDrop) args.push('--cap-drop', c)
  for (const o of s.securityOpt) args.push('--security-opt', o)
  const [entry, ...entryArgs] = s.entrypoint
  if (entry !== undefined) args.push('--entrypoint', entry)
  args.push(s.image, ...entryArgs, ...s.command)
  return docker(args)
}

/** Runs the service's compose healthcheck inside its container once; true when it passes. */
export async function healthy(s: ComposeService, container: string): Promise<boolean> {
  const [kind, ...rest] = s.healthcheck
  const cmd = kind === 'CMD-SHELL' ? ['sh', '-c', rest.join(' ')] : kind === 'CMD' ? rest : []
  if (cmd.length === 0) throw new Error(`${s.name} has no healthcheck in ${COMPOSE_FILE}`)
  return docker(['exec', container, ...cmd], 60_000).then(
    () => true,
    () => false
  )
}

/** The container's address on `network` (the host reaches it over the bridge, no published port needed). */
export async function addressOn(container: string, network: string): Promise<string> {
  const ip = await docker([
    'inspect',
    '--format',
    `{{ (index .NetworkSettings.Networks "${network}").IPAddress }}`,
    container
  ])
  if (ip === '') throw new Error(`${container} has no address on ${network}`)
  return ip
}
