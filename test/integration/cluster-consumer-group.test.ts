// The consumer-group scale-out scenario on the three-node cluster (RF=3, min.insync.replicas=2): the group's
// coordinator and the partitions' leaders are spread over three brokers, so members talk to several of them.
import { after, before, describe, it } from 'node:test'
import { scaleKillAndAdd } from '../helpers/consumer-group.js'
import { startTestKafkaCluster, type TestKafkaCluster } from '../helpers/kafka.js'

let kafka: TestKafkaCluster
before(async () => {
  kafka = await startTestKafkaCluster()
})
after(async () => {
  await kafka?.stop()
})

describe('consume --group on the three-node cluster', () => {
  it('a group scales 1 -> 3 on 6 partitions counting each record once; one member SIGKILLed, one added: every record counted, commits never backwards, one owner per partition', (t) => scaleKillAndAdd(kafka, t))
})
