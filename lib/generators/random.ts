/**
 * Seeded randomness for the generators. sfc32 is small, fast and passes PractRand far beyond what
 * a log generator needs; Math.random is never used so a seed always reproduces the same bytes.
 */
export class Rng {
  private a: number
  private b: number
  private c: number
  private d: number

  constructor(seed: number) {
    // splitmix32 spreads nearby seeds (0, 1, 2...) into unrelated sfc32 states.
    let s = seed >>> 0
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0
      let z = s
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
      return (z ^ (z >>> 16)) >>> 0
    }
    this.a = next()
    this.b = next()
    this.c = next()
    this.d = next()
    for (let i = 0; i < 12; i++) this.u32()
  }

  u32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0
    this.d = (this.d + 1) >>> 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) >>> 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.c = (this.c + t) >>> 0
    return t
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.u32() / 4294967296
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n)
  }

  /** Uniform integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1)
  }

  chance(p: number): boolean {
    return this.float() < p
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T
  }

  /** Picks by relative weight: `[[value, weight], ...]`. */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    let total = 0
    for (const [, w] of items) total += w
    let x = this.float() * total
    for (const [v, w] of items) {
      x -= w
      if (x < 0) return v
    }
    return (items[items.length - 1] as readonly [T, number])[0]
  }

  /** Exponential with the given mean: inter-arrival gaps of a Poisson process. */
  exp(mean: number): number {
    return -Math.log(1 - this.float()) * mean
  }

  /** Geometric count >= 1 with the given mean: how many requests a session makes, etc. */
  geometric(mean: number): number {
    const p = 1 / Math.max(1, mean)
    return 1 + Math.floor(Math.log(1 - this.float()) / Math.log(1 - p + 1e-12))
  }

  /** Log-normal: response sizes and latencies are heavy-tailed like this. */
  logNormal(median: number, sigma: number): number {
    const u = 1 - this.float()
    const v = this.float()
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
    return median * Math.exp(sigma * z)
  }

  hex(chars: number): string {
    let out = ''
    while (out.length < chars) out += this.u32().toString(16).padStart(8, '0')
    return out.slice(0, chars)
  }

  /** Random string over an alphabet, e.g. Zeek uids (base62). */
  chars(alphabet: string, n: number): string {
    let out = ''
    for (let i = 0; i < n; i++) out += alphabet[this.int(alphabet.length)]
    return out
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1)
      const t = items[i] as T
      items[i] = items[j] as T
      items[j] = t
    }
    return items
  }
}

/**
 * Zipf(s) over ranks 0..n-1: rank 0 is the most popular. Real traffic (paths, hosts, clients, user
 * agents, domains) follows this shape, which is where most of a log's redundancy comes from.
 */
export class Zipf {
  private readonly cdf: Float64Array

  constructor(n: number, s = 1.0) {
    this.cdf = new Float64Array(n)
    let sum = 0
    for (let i = 0; i < n; i++) {
      sum += 1 / Math.pow(i + 1, s)
      this.cdf[i] = sum
    }
    for (let i = 0; i < n; i++) this.cdf[i] = (this.cdf[i] as number) / sum
  }

  sample(rng: Rng): number {
    const x = rng.float()
    let lo = 0
    let hi = this.cdf.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((this.cdf[mid] as number) < x) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

/** A vocabulary with Zipf popularity: `pick()` returns popular entries far more often. */
export class ZipfPicker<T> {
  private readonly zipf: Zipf
  constructor(
    readonly items: readonly T[],
    s = 1.0
  ) {
    this.zipf = new Zipf(items.length, s)
  }
  pick(rng: Rng): T {
    return this.items[this.zipf.sample(rng)] as T
  }
}
