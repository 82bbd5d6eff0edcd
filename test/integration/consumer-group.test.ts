// `squeeze consume --group` on the embedded broker, under the new consumer protocol (KIP-848) and the classic one:
// instances split a 6-partition topic, count each record once, commit, and hand partitions over when members
// join or die.
import { describe, it } from 'node:test'
import { scaleKillAndAdd } from '../helpers/consumer-group.js'
import { useTestKafka } from '../helpers/kafka.js'

const kafka = useTestKafka()

describe('consume --group on a 6-partition topic', () => {
  it("scales from 1 to 3 instances with every record counted once; a SIGKILLed member's partitions resume from its commits; a new member takes a share (KIP-848)", (t) =>
    scaleKillAndAdd(kafka, t))

  // The classic protocol's session is the client's: 6 s, so the dead leader is noticed in seconds.
  it('-X group.protocol=classic: the same, with the group leader SIGKILLed: a survivor becomes leader and assigns its partitions (eager range rebalance)', (t) =>
    scaleKillAndAdd(kafka, t, {
      args: ['-X', 'group.protocol=classic', '-X', 'session.timeout.ms=6000', '-X', 'heartbeat.interval.ms=300'],
      victim: 0
    }))
})
