import type { Clock } from '../../lib/sources/generator-source.js'

/** A clock that only moves when the code under test sleeps: days of --rate traffic in seconds. */
export function fakeClock(startMs: number): Clock & { ms: number } {
  const clock = {
    ms: startMs,
    now: () => clock.ms,
    sleep: async (ms: number) => {
      clock.ms += ms
    }
  }
  return clock
}
