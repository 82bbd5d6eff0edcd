import type { Admin } from 'kafkajs'

/**
 * About how many records a topic holds now (each partition's high watermark less its low), at most `max`: the total
 * a progress line counts towards. Undefined when the offsets cannot be read: progress is never a reason to fail.
 */
export async function topicRecordCount(
  admin: Pick<Admin, 'fetchTopicOffsets'>,
  topic: string,
  max?: number
): Promise<number | undefined> {
  try {
    const offsets = await admin.fetchTopicOffsets(topic)
    const count = offsets.reduce((sum, p) => sum + Math.max(0, Number(p.high) - Number(p.low)), 0)
    return max === undefined ? count : Math.min(count, max)
  } catch {
    return undefined
  }
}
