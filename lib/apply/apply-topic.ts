import type { KafkajsCluster } from '../kafka/kafkajs-internals.js'
import { alterTopicConfigs } from '../kafka/incremental-alter-configs.js'
import type { TopicConfigChoice } from './topic-config.js'

/**
 * Sets the chosen topic configs: first a dry run the broker validates (IncrementalAlterConfigs with
 * validateOnly), printed, then the change itself. Only the named configs change.
 */
export async function applyTopicConfig(
  cluster: KafkajsCluster,
  choice: TopicConfigChoice,
  print: (line: string) => void
): Promise<void> {
  const change = { topic: choice.topic, configs: choice.configs }
  const described = choice.configs.map((c) => `${c.name}=${c.value}`).join(',')
  await alterTopicConfigs(cluster, change, true)
  print(`dry run: the broker accepts ${described} on ${choice.topic} (IncrementalAlterConfigs, validateOnly)`)
  await alterTopicConfigs(cluster, change, false)
  print(`applied: ${described} on ${choice.topic}`)
}
