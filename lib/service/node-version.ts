/**
 * The Node lines squeeze runs on, as package.json `engines` names them (a test keeps the two equal). Written out
 * here rather than read from package.json: the check runs before anything else, on any Node, with no file to read.
 */
export const SUPPORTED_NODE = ['24.22.3', '26.12.1'] as const

/** `engines.node` for SUPPORTED_NODE: a caret range per line. */
export const SUPPORTED_NODE_RANGE = SUPPORTED_NODE.map((v) => `^${v}`).join(' || ')

function parts(version: string): number[] {
  return version
    .replace(/^v/, '')
    .split('.')
    .map((n) => Number.parseInt(n, 10) || 0)
}

/** Whether `version` is on a supported line: the same major, at least that line's release. */
export function isSupportedNode(version: string): boolean {
  const [major = 0, minor = 0, patch = 0] = parts(version)
  return SUPPORTED_NODE.some((supported) => {
    const [sMajor = 0, sMinor = 0, sPatch = 0] = parts(supported)
    return major === sMajor && (minor > sMinor || (minor === sMinor && patch >= sPatch))
  })
}

/** One line for an unsupported Node, naming the supported ones; undefined on a supported Node. */
export function unsupportedNodeMessage(version: string): string | undefined {
  if (isSupportedNode(version)) return undefined
  return (
    `squeeze runs on Node ${SUPPORTED_NODE.map((v) => `${v.split('.')[0]} (>= ${v})`).join(' or ')}, not ${version.replace(/^v?/, 'v')}; ` +
    'put a supported node first on PATH or name it in SQUEEZE_NODE'
  )
}
