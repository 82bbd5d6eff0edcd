/**
 * The sum over all label sets of one counter on a service's /metrics, or null while the endpoint does not answer
 * (not listening yet, or the process is gone): tests poll it to act on what the service has done, not on a timer.
 */
export async function scrapeCounter(port: number, name: string): Promise<number | null> {
  let body: string
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) })
    if (res.status !== 200) return null
    body = await res.text()
  } catch {
    return null
  }
  let sum = 0
  for (const line of body.split('\n')) {
    const match = /^(\w+)(?:\{[^}]*\})? (\S+)$/.exec(line)
    if (match?.[1] === name) sum += Number(match[2])
  }
  return sum
}
