import { createRequire } from 'node:module'

interface TrimBinding {
  trimHeap?: () => boolean
}

const require = createRequire(import.meta.url)
// The call lives in squeeze's one native binding (native/squeeze-lz4); a build from before it has none.
const binding = require('squeeze-lz4') as TrimBinding

/**
 * Hands the C heap's free pages back to the system (glibc's malloc_trim, every arena, the threads' included):
 * glibc keeps freed blocks resident inside its heaps, so a long pass that allocates and frees buffers of many
 * sizes holds, topic after topic, more and more memory it no longer uses. True when memory went back; false
 * where the C library has no such call. Costs a walk of the free blocks: a few milliseconds, not per batch.
 */
export function trimHeap(): boolean {
  return binding.trimHeap?.() ?? false
}
