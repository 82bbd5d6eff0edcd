/** One sample of a metric: its labels and value. */
export interface MetricSample {
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/**
 * Every sample of one metric on a service's /metrics, or null while the endpoint does not answer (not listening
 * yet, or the process is gone): tests poll it to act on what the service has done, not on a timer.
 */
export async function scrapeSamples(port: number, name: string): Promise<MetricSample[] | null> {
  let body: string
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) })
    if (res.status !== 200) return null
    body = await res.text()
  } catch {
    return null
  }
  const samples: MetricSample[] = []
  for (const line of body.split('\n')) {
    const match = /^(\w+)(?:\{([^}]*)\})? (\S+)$/.exec(line)
    if (match?.[1] !== name) continue
    const labels = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1] ?? '', m[2] ?? ''])
    )
    samples.push({ labels, value: Number(match[3]) })
  }
  return samples
}

/** The sum over all label sets of one counter, or null while the endpoint does not answer. */
export async function scrapeCounter(port: number, name: string): Promise<number | null> {
  const samples = await scrapeSamples(port, name)
  return samples === null ? null : samples.reduce((sum, s) => sum + s.value, 0)
}
