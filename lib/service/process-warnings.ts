/**
 * kafkajs 2.2.4's request queue, when no broker throttles it, schedules `setTimeout(throttledUntil - now)` with
 * `throttledUntil = -1`. Node 20 ran that timer at once without a word; Node 24 still runs it at once but prints
 * a TimeoutNegativeWarning (three lines on stderr) in every process that talks to Kafka, so an error meant to be
 * one line became four. The process owner drops that one warning; every other warning reaches the listeners
 * Node had (its own printer included) as before.
 */
export function dropNegativeTimeoutWarnings(): void {
  const previous = process.listeners('warning')
  process.removeAllListeners('warning')
  process.on('warning', (warning: Error) => {
    if (warning.name === 'TimeoutNegativeWarning') return
    for (const listener of previous) listener(warning)
  })
}
