import { ErrorCodes, SqueezeError, errorMessage } from '../errors.js'

const AUTHORIZATION = /(TOPIC|CLUSTER|GROUP|TRANSACTIONAL_ID)_AUTHORIZATION_FAILED|not authorized/i

/**
 * The copy mode's refusal by the cluster's ACLs, said in one line: which ACL is missing, and that the
 * read-only projection needs none of them. Undefined when `err` is not an authorization refusal.
 */
export function missingCopyAcl(err: unknown, sourceTopic: string): SqueezeError | undefined {
  const text = chain(err)
  if (!AUTHORIZATION.test(text)) return undefined
  const missing = /GROUP_AUTHORIZATION_FAILED/i.test(text)
    ? `Read on consumer group squeeze-compare.${sourceTopic}.* (prefixed)`
    : /CLUSTER_AUTHORIZATION_FAILED|TOPIC_AUTHORIZATION_FAILED/i.test(text) && /create/i.test(text)
      ? `Create on the destination topics (a prefixed ACL on topic "${sourceTopic}."), then Write on them`
      : `Create and Write on the destination topics (prefixed "${sourceTopic}.") and Read on group squeeze-compare.${sourceTopic}.*`
  return new SqueezeError(
    ErrorCodes.AUTH_FAILED,
    `compare's copy mode is not authorized: it needs ${missing}; ` +
      `--mode projection reads ${sourceTopic} with only Read and Describe on it and creates nothing`,
    { cause: err }
  )
}

function chain(err: unknown): string {
  const parts: string[] = []
  let at: unknown = err
  for (let depth = 0; at !== undefined && at !== null && depth < 5; depth++) {
    parts.push(errorMessage(at))
    if (typeof at === 'object' && 'errors' in at && Array.isArray(at.errors))
      parts.push(
        ...(at.errors as unknown[]).map(
          (e) => `${typeof e === 'object' && e !== null && 'type' in e ? String(e.type) : ''} ${errorMessage(e)}`
        )
      )
    at = typeof at === 'object' && 'cause' in at ? at.cause : undefined
  }
  return parts.join(' | ')
}
