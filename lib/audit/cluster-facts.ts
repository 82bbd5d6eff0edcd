import kafkajs, { type Admin } from 'kafkajs'
import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'
import { didYouMean, isTopicPattern } from '../kafka/missing-topics.js'
import type { TopicFacts } from './audit-report.js'
import { mapConcurrently } from '../map-concurrently.js'

/** Requests in flight at once while facts are gathered: enough to hide round trips, few enough for a busy cluster. */
const AT_ONCE = 8
const CONFIG_NAMES = ['retention.ms', 'retention.bytes', 'cleanup.policy', 'compression.type']

export interface TopicSelection {
  readonly topics: RegExp | null
  readonly exclude: RegExp | null
}

/**
 * The topics to audit: every topic the user may describe, less Kafka's internal ones (a leading `__`) unless
 * --topics names them, matched whole against --topics and not against --exclude. Sorted, so runs compare.
 */
export async function selectTopics(admin: Admin, selection: TopicSelection): Promise<string[]> {
  return chooseTopics(await admin.listTopics(), selection)
}

/** selectTopics over the cluster's topic list `all`: the topics to audit, or an error saying why there are none. */
export function chooseTopics(all: readonly string[], selection: TopicSelection): string[] {
  const chosen = all.filter((t) => (selection.topics === null ? !t.startsWith('__') : selection.topics.test(t)))
  const selected = chosen.filter((t) => !(selection.exclude?.test(t) ?? false)).sort()
  if (selected.length === 0) throw nothingSelected(all, chosen, selection)
  return selected
}

/**
 * Why no topic is left to audit, in one line: an empty report would pass for a cluster with nothing to change. A
 * pattern matches whole names, which is the usual surprise: one without regex characters is also checked as a
 * misspelt name and as a part of names.
 */
function nothingSelected(all: readonly string[], chosen: readonly string[], selection: TopicSelection): SqueezeError {
  const visible = all.filter((t) => !t.startsWith('__'))
  if (selection.topics === null && selection.exclude === null)
    return new SqueezeError(ErrorCodes.SOURCE, "the cluster has no topics to audit (Kafka's internal __ topics aside)")
  if (chosen.length > 0)
    return new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `--exclude ${written(selection.exclude)} leaves out all ${chosen.length} topics selected: nothing to audit`
    )
  const pattern = written(selection.topics)
  // A pattern of no regex characters reads as a name: misspelt, or meant as a part of names.
  const plain = !isTopicPattern(pattern)
  const containing = plain ? visible.filter((t) => t.includes(pattern)).length : 0
  const hint =
    (plain ? didYouMean(pattern, visible) : null) ??
    (containing > 0 ? `.*${pattern}.* matches the ${containing} whose names hold it` : '')
  return new SqueezeError(
    ErrorCodes.CONFIG_INVALID,
    `--topics ${pattern} matches none of the cluster's ${visible.length} topics (a pattern matches whole names)` +
      (hint === '' ? '' : `; ${hint}`)
  )
}

/** A pattern as the operator wrote it: the flag's value, without the anchors that make it match whole names. */
function written(pattern: RegExp | null): string {
  return pattern?.source.replace(/^\^\(\?:([\s\S]*)\)\$$/, '$1') ?? ''
}

/** Per topic: its facts, or why they could not be read (a refused DescribeConfigs names its ACL). */
export type FactsOrError = { readonly facts: TopicFacts } | { readonly error: string; readonly notAuthorized: boolean }

/** Every selected topic's facts, one topic's failure apart from the others'. */
export async function readTopicFacts(admin: Admin, topics: readonly string[]): Promise<Map<string, FactsOrError>> {
  const [metadata, groups] = await Promise.all([
    admin.fetchTopicMetadata({ topics: [...topics] }).then((m) => new Map(m.topics.map((t) => [t.name, t.partitions]))),
    groupsByTopic(admin)
  ])
  const facts = await mapConcurrently(topics, AT_ONCE, async (topic): Promise<FactsOrError> => {
    try {
      const partitions = metadata.get(topic) ?? []
      const [configs, offsets] = await Promise.all([topicConfigs(admin, topic), admin.fetchTopicOffsets(topic)])
      return {
        facts: {
          topic,
          partitions: partitions.length,
          replicationFactor: Math.max(0, ...partitions.map((p) => p.replicas.length)),
          retentionMs: numberOrNull(configs.get('retention.ms')?.value),
          retentionBytes: numberOrNull(configs.get('retention.bytes')?.value),
          cleanupPolicy: configs.get('cleanup.policy')?.value ?? null,
          compressionType: configs.get('compression.type')?.value ?? null,
          compressionTypeSource: configs.get('compression.type')?.source ?? null,
          records: offsets.reduce((n, o) => n + Number(o.high) - Number(o.low), 0),
          groups: [...(groups.get(topic) ?? [])].sort()
        }
      }
    } catch (err) {
      const text = errorMessage(err)
      const notAuthorized = /not authorized|AUTHORIZATION_FAILED/i.test(text)
      return notAuthorized
        ? { error: `missing DescribeConfigs (or Describe) on topic ${topic}: ${text}`, notAuthorized }
        : { error: text, notAuthorized }
    }
  })
  return new Map(topics.map((t, i) => [t, facts[i] as FactsOrError]))
}

interface ConfigValue {
  readonly value: string | null
  readonly source: TopicFacts['compressionTypeSource']
}

/** DescribeConfigs for one topic: kafkajs fails a whole request on one refused resource, so each asks alone. */
async function topicConfigs(admin: Admin, topic: string): Promise<Map<string, ConfigValue>> {
  const { resources } = await admin.describeConfigs({
    resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: topic, configNames: CONFIG_NAMES }],
    includeSynonyms: false
  })
  const entries = resources[0]?.configEntries ?? []
  return new Map(
    entries.map((e) => [
      e.configName,
      { value: e.configValue, source: sourceOf(e as { configSource?: number; isDefault: boolean }) }
    ])
  )
}

/** DescribeConfigs' config source: 1 the topic's own, 4 and 5 the broker's, 6 Kafka's default (KIP-226). */
function sourceOf(entry: { configSource?: number; isDefault: boolean }): ConfigValue['source'] {
  if (entry.configSource === 1) return 'topic'
  if (entry.configSource === 4 || entry.configSource === 5 || entry.configSource === 3) return 'broker'
  if (entry.configSource === 6 || entry.isDefault) return 'default'
  return null
}

/**
 * Every group with a committed offset, by topic. ListGroups lists classic and consumer-protocol (KIP-848) groups
 * alike, and OffsetFetch without topics returns whatever a group committed, whichever protocol it runs: one
 * request per group, a few at a time. A group the user may not describe is left out, as Kafka's own tools do.
 */
export async function groupsByTopic(admin: Admin): Promise<Map<string, Set<string>>> {
  const { groups } = await admin.listGroups()
  const ids = [...new Set(groups.map((g) => g.groupId))]
  const byTopic = new Map<string, Set<string>>()
  await mapConcurrently(ids, AT_ONCE, async (groupId) => {
    const offsets = await admin.fetchOffsets({ groupId }).catch(() => [])
    for (const { topic, partitions } of offsets) {
      if (!partitions.some((p) => Number(p.offset) >= 0)) continue
      const set = byTopic.get(topic) ?? new Set<string>()
      set.add(groupId)
      byTopic.set(topic, set)
    }
  })
  return byTopic
}

function numberOrNull(value: string | null | undefined): number | null {
  if (value === null || value === undefined || value.trim() === '') return null
  const n = Number(value)
  return Number.isFinite(n) ? n : null
}
