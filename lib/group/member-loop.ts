import { ErrorCodes, SqueezeError, errorMessage, isTransient } from '../errors.js'
import type { Logger } from '../log/logger.js'
import { backoffDelay, sleep, Wakeable } from '../retry.js'

/** What comes after a round: the next one at once (an acknowledgement, a rejoin), after the interval, or a backoff. */
export type NextRound = 'now' | 'wait' | 'backoff'

/** One group protocol's side of the loop MemberLoop runs. */
export interface MemberRounds<Answer> {
  /** The coordinator call of one round (a heartbeat, or a join); what it throws is retried when transient. */
  call(signal: AbortSignal): Promise<Answer>
  /** Acts on the call's answer; what it throws ends the loop. */
  handle(answer: Answer): Promise<NextRound>
  /** An error of `call` the protocol answers by rejoining: handled (true), and the next round goes at once. */
  rejoinOn(err: unknown): Promise<boolean>
  /** A commit was refused as fenced: drops every partition uncommitted, so that the member joins again. */
  dropFenced(): Promise<void>
  /** The wait between two rounds that went well. */
  intervalMs(): number
  /** Gives the partitions up and leaves the group; after the loop ends. */
  leave(): Promise<void>
}

const BACKOFF = { initialDelayMs: 100, maxDelayMs: 2000 }

/**
 * Resolves as `work` does, calling `beat` every `intervalMs()` meanwhile. A member that leaves commits its
 * partitions in onRevoked first, and that commit can wait on a coordinator's failover (a transaction's
 * coordinator elected and loaded anew) for longer than the session timeout: without heartbeats the group's
 * coordinator removes the member and refuses the commit as fenced. `beat` never throws; false once heartbeats
 * are of no use (the coordinator no longer knows the member). A beat on the wire is waited for before this
 * resolves, so the leave request goes after it.
 */
export async function heartbeatWhile<T>(
  work: Promise<T>,
  beat: () => Promise<boolean>,
  intervalMs: () => number
): Promise<T> {
  const done = new AbortController()
  const beating = (async () => {
    while (await sleep(intervalMs(), done.signal)) if (!(await beat())) return
  })()
  try {
    return await work
  } finally {
    done.abort()
    await beating
  }
}

/**
 * The run-and-rejoin loop both group protocols share: rounds of coordinator calls until the signal aborts, a
 * transient failure retried with backoff against a coordinator looked up again, a rejoin asked for between two
 * rounds (never while a call is on the wire, whose answer would set the member's state again), then leave.
 */
export class MemberLoop {
  private rejoinAsked = false
  /** Ends the current wait between rounds (a rejoin asked for). */
  private readonly pause = new Wakeable()

  constructor(
    private readonly config: { groupId: string; /** Names the call in logs and errors. */ call: string },
    private readonly deps: { resetCoordinator(): void; log: Logger }
  ) {}

  /** A commit was refused as fenced: the member drops its partitions and joins again before its next round. */
  rejoin(): void {
    this.rejoinAsked = true
    this.pause.wake()
  }

  async run<Answer>(member: MemberRounds<Answer>, signal: AbortSignal): Promise<void> {
    let failures = 0
    while (!signal.aborted) {
      if (this.rejoinAsked) {
        this.rejoinAsked = false
        await member.dropFenced()
      }
      let answer: Answer
      try {
        answer = await member.call(signal)
      } catch (err) {
        if (await member.rejoinOn(err)) continue
        if (!isTransient(err)) {
          const message = `group ${this.config.groupId}: ${this.config.call} failed: ${errorMessage(err)}`
          throw new SqueezeError(ErrorCodes.GROUP, message, { cause: err })
        }
        this.deps.resetCoordinator()
        this.deps.log.warn({ err: errorMessage(err), attempt: failures + 1 }, `${this.config.call} failed; retrying`)
        await sleep(backoffDelay(failures++, BACKOFF), signal)
        continue
      }
      const next = await member.handle(answer)
      failures = next === 'backoff' ? failures + 1 : 0
      if (next === 'now') continue
      await this.pause.sleep(next === 'backoff' ? backoffDelay(failures - 1, BACKOFF) : member.intervalMs(), signal)
    }
    await member.leave()
  }
}
