import { createHash } from 'node:crypto'
import { mkdir, open, readFile, rename } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
import type { FilePosition } from './file-set.js'

/** The state directory when --state-dir is not given: $XDG_STATE_HOME/squeeze, else ~/.local/state/squeeze. */
export function defaultStateDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME
  const base = xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.local', 'state')
  return join(base, 'squeeze')
}

/**
 * A name for one file set shipped to one topic, the same across restarts: the state file's name and, with
 * --exactly-once, the transactional id's suffix and the positions' key prefix.
 */
export function fileSetId(host: string, topic: string, globs: readonly string[]): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([topic, [...globs].sort()]))
    .digest('hex')
    .slice(0, 16)
  return `${host}-${digest}`
}

interface StateFile {
  readonly version: 1
  readonly files: readonly FilePosition[]
}

/** Read positions of a file set on disk, replaced atomically: a crash leaves the old file or the new one, whole. */
export class PositionStore {
  readonly path: string
  private savedAtMs: number | null = null

  constructor(
    private readonly dir: string,
    id: string
  ) {
    this.path = join(dir, `${id}.json`)
  }

  /** The positions saved last, or none without a state file yet. A state file that does not parse is an error. */
  async load(): Promise<FilePosition[]> {
    let text: string
    try {
      text = await readFile(this.path, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      const message = `cannot read the state file ${this.path}: ${errorMessage(err)}`
      throw new SqueezeError(ErrorCodes.SOURCE, message, { cause: err })
    }
    try {
      const state = JSON.parse(text) as StateFile
      if (state.version !== 1 || !Array.isArray(state.files)) throw new Error('not a squeeze state file (version 1)')
      return [...state.files]
    } catch (err) {
      const message = `state file ${this.path} does not parse: ${errorMessage(err)}; move it away to start over`
      throw new SqueezeError(ErrorCodes.SOURCE, message, { cause: err })
    }
  }

  /**
   * Writes the positions to a temporary file, fdatasyncs it, renames it over the state file and fsyncs the folder.
   * fdatasync writes the file's bytes and its size, all a reader needs, without its timestamps.
   */
  async save(files: readonly FilePosition[]): Promise<void> {
    const temporary = `${this.path}.tmp`
    // The folder is made when the first open finds it missing: a recursive mkdir on every save costs as much CPU as
    // the rest of the save, and saves follow acknowledgements.
    const handle = await open(temporary, 'w').catch(async (err: unknown) => {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      await mkdir(this.dir, { recursive: true })
      return open(temporary, 'w')
    })
    try {
      await handle.writeFile(JSON.stringify({ version: 1, files } satisfies StateFile))
      await handle.datasync()
    } finally {
      await handle.close()
    }
    await rename(temporary, this.path)
    const dir = await open(this.dir, 'r')
    try {
      await dir.sync()
    } finally {
      await dir.close()
    }
    this.savedAtMs = Date.now()
  }

  /**
   * save() of the positions just loaded, before anything is shipped: a state directory that cannot be written fails
   * the start with what to do, where it would otherwise fail the first save, after lines went whose positions a
   * restart then does not know.
   */
  async saveLoaded(files: readonly FilePosition[]): Promise<void> {
    try {
      await this.save(files)
    } catch (err) {
      const message =
        `cannot save read positions in ${this.dir}: ${errorMessage(err)}; give --state-dir a directory squeeze can ` +
        'write, or --no-state to read every file from its start each time'
      throw new SqueezeError(ErrorCodes.SOURCE, message, { cause: err })
    }
  }

  /** Seconds since the last save in this run, or null before the first. */
  ageSeconds(): number | null {
    return this.savedAtMs === null ? null : (Date.now() - this.savedAtMs) / 1000
  }
}
