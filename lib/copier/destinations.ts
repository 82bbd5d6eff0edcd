import kafkajs, { type Admin } from 'kafkajs'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
import { missingTopicsError } from '../kafka/missing-topics.js'
import { createTopicsAndWait, deleteTopicsAndWait, describeCreateTopicsError } from '../kafka/topics.js'
import type { CopyTarget } from './copier-config.js'

/**
 * Makes sure every destination exists with the source's partition count and compression.type=producer, so the
 * broker stores each target's batches as its producer compressed them, and the dead-letter topic, when named. Checks everything before creating
 * anything, so a wrong destination leaves nothing half-created behind. Returns the topics it created.
 */
export async function prepareDestinations(
  admin: Admin,
  sourceTopic: string,
  targets: readonly CopyTarget[],
  deadLetterTopic?: string
): Promise<string[]> {
  const listed = await admin.listTopics()
  const absent = missingTopicsError(listed, [sourceTopic], { role: 'source topic' })
  if (absent !== undefined) throw absent
  const existing = new Set(listed)
  const [source] = (await admin.fetchTopicMetadata({ topics: [sourceTopic] })).topics
  const partitions = source?.partitions.length ?? 0
  const replicationFactor = source?.partitions[0]?.replicas.length ?? 1
  const present = targets.filter((t) => existing.has(t.topic)).map((t) => t.topic)
  if (present.length > 0) {
    const problems: string[] = []
    const { topics } = await admin.fetchTopicMetadata({ topics: present })
    const configs = await admin.describeConfigs({
      includeSynonyms: false,
      resources: present.map((name) => ({
        type: kafkajs.ConfigResourceTypes.TOPIC,
        name,
        configNames: ['compression.type']
      }))
    })
    for (const topic of present) {
      const count = topics.find((t) => t.name === topic)?.partitions.length
      if (count !== partitions)
        problems.push(
          `${topic} has ${count} partitions, the source ${partitions} (delete it or pick another destination)`
        )
      const compression = configs.resources
        .find((r) => r.resourceName === topic)
        ?.configEntries.find((e) => e.configName === 'compression.type')?.configValue
      if (compression !== 'producer')
        problems.push(
          `${topic} has compression.type=${compression}; set it to producer (kafka-configs --alter --add-config compression.type=producer) or the broker recompresses every batch`
        )
    }
    if (problems.length > 0)
      throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `destination topics do not fit: ${problems.join('; ')}`)
  }
  const missing = targets.filter((t) => !existing.has(t.topic)).map((t) => t.topic)
  // The dead-letter topic is created like Kafka Connect's: one partition, the source's replication.
  const deadLetters =
    deadLetterTopic === undefined || existing.has(deadLetterTopic)
      ? []
      : [{ topic: deadLetterTopic, numPartitions: 1, replicationFactor }]
  if (missing.length === 0 && deadLetters.length === 0) return []
  try {
    await createTopicsAndWait(admin, [
      ...missing.map((topic) => ({
        topic,
        numPartitions: partitions,
        replicationFactor,
        configEntries: [{ name: 'compression.type', value: 'producer' }]
      })),
      ...deadLetters
    ])
  } catch (err) {
    // The topics this call did create are removed again; when that fails too, the error names them.
    const leftOver = await deleteTopicsAndWait(admin, [...missing, ...deadLetters.map((d) => d.topic)]).then(
      () => '',
      (cleanup: unknown) => `; ${errorMessage(cleanup)}`
    )
    throw new SqueezeError(
      ErrorCodes.PRODUCE_FAILED,
      `cannot create destination topics: ${describeCreateTopicsError(err)}${leftOver}`,
      { cause: err }
    )
  }
  return [...missing, ...deadLetters.map((d) => d.topic)]
}
