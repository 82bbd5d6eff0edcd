import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Worker } from 'node:worker_threads'
import { threadCpuSeconds } from '../../../lib/metrics/thread-cpu.js'

function spin(ms: number): void {
  const end = Date.now() + ms
  while (Date.now() < end);
}

describe('threadCpuSeconds', () => {
  it('counts this thread\'s CPU, not another thread\'s', async () => {
    const before = threadCpuSeconds()
    spin(200)
    const spent = threadCpuSeconds() - before
    assert.ok(spent > 0.05, `a 200 ms spin shows as CPU (got ${spent})`)

    // Another thread spins while this one waits: process CPU grows, this thread's barely does.
    const idleBefore = threadCpuSeconds()
    const processBefore = process.cpuUsage()
    const worker = new Worker('const end = Date.now() + 400; while (Date.now() < end);', { eval: true })
    await new Promise((resolve) => worker.once('exit', resolve))
    const idle = threadCpuSeconds() - idleBefore
    const used = process.cpuUsage(processBefore)
    const processSpent = (used.user + used.system) / 1e6
    if (process.platform === 'linux') assert.ok(idle < processSpent / 2, `this thread ${idle} s, whole process ${processSpent} s`)
    assert.ok(processSpent > 0.1, 'the worker\'s spin shows in process CPU')
  })
})
