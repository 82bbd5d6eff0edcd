import { formatCodecSpec, parseCodecSpec } from '../codecs/index.js'
import { ErrorCodes, SqueezeError } from '../errors.js'
import { defaultDestination, type CopyTarget } from './copier-config.js'

/** What copy and compare write when --targets is not given. */
export const DEFAULT_TARGETS = ['none', 'gzip:6', 'snappy', 'lz4', 'zstd:1', 'zstd:3', 'zstd:6', 'zstd:9'] as const

/** --targets and --destination: one destination topic per codec[:level], none twice and none the source. */
export function parseTargets(list: string, source: string, template?: string): CopyTarget[] {
  const specs = list
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '')
    .map(parseCodecSpec)
  if (specs.length === 0)
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, '--targets is empty: name at least one codec[:level]')
  const targets = specs.map((spec) => ({
    spec,
    topic:
      template === undefined
        ? defaultDestination(source, spec)
        : template.replaceAll('{source}', source).replaceAll('{target}', formatCodecSpec(spec).replace(':', '-'))
  }))
  const topics = new Set(targets.map((t) => t.topic))
  if (topics.size !== targets.length)
    throw new SqueezeError(
      ErrorCodes.CONFIG_INVALID,
      `--targets names the same destination twice (${targets.map((t) => t.topic).join(', ')})`
    )
  if (topics.has(source)) throw new SqueezeError(ErrorCodes.CONFIG_INVALID, 'a destination cannot be the source topic')
  return targets
}
