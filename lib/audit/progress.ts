import type { Progress, ProgressReport } from '../progress/progress.js'
import type { AuditProgressSink } from './run-audit.js'

/**
 * The pass's progress on lib/progress's line (or JSON log line off a terminal): topics done out of total, the
 * record bytes read so far (topics still being sampled included) and the ETA at the pace of the topics done.
 */
export class AuditProgress implements AuditProgressSink {
  private total = 0
  private done = 0
  private bytes = 0

  constructor(private readonly progress: Pick<Progress, 'report' | 'flush' | 'done'>) {}

  begin(topics: number): void {
    this.total = topics
    this.progress.report(this.line())
  }

  read(bytes: number): void {
    this.bytes += bytes
    this.progress.report(this.line())
  }

  topicDone(_topic: string): void {
    this.done++
    if (this.done === this.total) this.progress.flush(this.line())
    else this.progress.report(this.line())
  }

  /** Clears the terminal line, so the report starts on a clean one. */
  end(): void {
    this.progress.done()
  }

  private line(): ProgressReport {
    return { phase: 'audit', done: this.done, total: this.total, unit: 'topics', bytesRead: this.bytes }
  }
}
