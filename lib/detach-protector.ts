/**
 * Detaches one throwaway ArrayBuffer, so that this thread's hot code is compiled once, before it runs.
 *
 * V8 compiles typed-array reads and writes without a detached-buffer check for as long as no ArrayBuffer in the
 * isolate has ever been detached (its ArrayBufferDetaching protector). The producer's first batch transferred to a
 * compression thread detaches one, and V8 then drops every optimized function that relied on that: in a
 * 200,000-line `produce --source file`, all of the parse, encode and batch code, some 20,000 lines in, compiled
 * again from the interpreter up. The compression thread did the same on its first reply. Called at start-up, before
 * any of that code is hot, it makes V8 compile that code once, with the check (`--trace-protector-invalidation`
 * shows when it happens).
 */
export function settleDetachProtector(): void {
  const throwaway = new ArrayBuffer(1)
  structuredClone(throwaway, { transfer: [throwaway] })
}
