import { ProjectionPool } from '../../../../lib/compare/projection/worker-pool.js'

/** A projection pool labelling tasks by codec, closed once `use` settles; `workerUrl` swaps in a test's own thread. */
export async function withPool<T>(
  threads: number,
  use: (pool: ProjectionPool) => Promise<T>,
  workerUrl?: URL
): Promise<T> {
  const pool = new ProjectionPool(threads, (t) => t.spec.codec, workerUrl)
  try {
    return await use(pool)
  } finally {
    await pool.close()
  }
}
