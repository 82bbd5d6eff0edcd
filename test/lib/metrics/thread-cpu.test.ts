import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Worker } from 'node:worker_threads'
import { threadCpuClockIsPrecise, threadCpuSeconds } from '../../../lib/metrics/thread-cpu.js'

const processCpuSeconds = (): number => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1e6
}

// A spin measured by the thread's own clock, not the wall clock: on a loaded machine a thread may get a few
// milliseconds of CPU in a second, so only the clocks' figures against each other say anything.
const SPIN_CPU_SECONDS = 0.2
// Far beyond any load: only a clock that never advances reaches it.
const GIVE_UP_MS = 120_000

const MODULE_URL = new URL('../../../lib/metrics/thread-cpu.js', import.meta.url).href
// The worker spins on its own thread's clock and reports what that clock counted.
const WORKER_SPIN = `
const { parentPort } = require('node:worker_threads')
import(${JSON.stringify(MODULE_URL)}).then(({ threadCpuSeconds }) => {
  const start = threadCpuSeconds()
  const giveUp = Date.now() + ${GIVE_UP_MS}
  while (threadCpuSeconds() - start < ${SPIN_CPU_SECONDS} && Date.now() < giveUp);
  parentPort.postMessage(threadCpuSeconds() - start)
})
`

describe('threadCpuSeconds', () => {
  it("advances while this thread computes, never faster than the wall clock, and within the process's CPU", () => {
    const wallStart = process.hrtime.bigint()
    const processStart = processCpuSeconds()
    const start = threadCpuSeconds()
    const giveUp = Date.now() + GIVE_UP_MS
    while (threadCpuSeconds() - start < SPIN_CPU_SECONDS && Date.now() < giveUp);
    const spent = threadCpuSeconds() - start
    const processSpent = processCpuSeconds() - processStart
    const wall = Number(process.hrtime.bigint() - wallStart) / 1e9
    assert.ok(spent >= SPIN_CPU_SECONDS, `the thread's clock advanced while it spun (${spent} s)`)
    assert.ok(
      spent <= wall,
      `a thread computes at most as long as the wall clock runs: thread ${spent} s, wall ${wall} s`
    )
    // Both read the kernel's scheduler accounting: the process's figure holds the thread's (1 ms for rounding).
    if (process.platform === 'linux')
      assert.ok(processSpent + 0.001 >= spent, `this thread ${spent} s, whole process ${processSpent} s`)
  })

  it("counts this thread's CPU, not another thread's", async () => {
    const idleStart = threadCpuSeconds()
    const processStart = processCpuSeconds()
    const worker = new Worker(WORKER_SPIN, { eval: true })
    const workerSpent = await new Promise<number>((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
    })
    await new Promise((resolve) => worker.once('exit', resolve))
    const idle = threadCpuSeconds() - idleStart
    const processSpent = processCpuSeconds() - processStart
    assert.ok(workerSpent >= SPIN_CPU_SECONDS, `the worker's own clock advanced while it spun (${workerSpent} s)`)
    assert.ok(
      processSpent + 0.001 >= workerSpent,
      `the worker's CPU is part of the process's: worker ${workerSpent} s, process ${processSpent} s`
    )
    // This thread only waited for the worker: its clock moved by far less than the worker's did.
    if (process.platform === 'linux')
      assert.ok(idle < workerSpent / 2, `this thread ${idle} s, the worker ${workerSpent} s`)
  })

  it('reads a short interval as the CPU it took, not 0 until the next scheduler tick', () => {
    // The binding is built with the suite (a stale build lacks the clock): on Linux the precise clock is required.
    if (process.platform === 'linux') assert.ok(threadCpuClockIsPrecise(), 'the native thread CPU clock is loaded')
    let zeros = 0
    let sum = 0
    for (let i = 0; i < 200; i++) {
      const start = threadCpuSeconds()
      let x = 0
      for (let j = 0; j < 20_000; j++) x += Math.sqrt(j)
      const spent = threadCpuSeconds() - start
      if (spent <= 0 || x < 0) zeros++
      sum += spent
    }
    // getrusage's thread figure reads 0 for nearly all of these intervals of tens of microseconds.
    assert.equal(zeros, 0, `intervals read as 0 CPU: ${zeros} of 200 (sum ${sum} s)`)
  })
})
