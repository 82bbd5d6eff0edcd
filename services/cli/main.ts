#!/usr/bin/env node
import { unsupportedNodeMessage } from '../../lib/service/node-version.js'
import { enableCompileCache, flushCompileCache } from '../../lib/service/compile-cache.js'
import { settleDetachProtector } from '../../lib/detach-protector.js'

// Before anything that needs a newer Node than the one running: one line and exit 2, not a stack trace.
const unsupported = unsupportedNodeMessage(process.versions.node)
if (unsupported !== undefined) {
  process.stderr.write(`${unsupported}\n`)
  process.exit(2)
}
// Before any other module loads, so that all of them come from the cache; hence the dynamic import below.
enableCompileCache()
settleDetachProtector()
const { runCommand } = await import('../../lib/service/lifecycle.js')

const USAGE = `squeeze: measure what each Kafka compression codec and level costs and saves on your own logs.

Usage: squeeze <command> [options]   (squeeze <command> --help for details; squeeze --version)

Commands:
  produce   read or generate log records, batch per partition, compress with a codec and level, send to Kafka
  consume   read topics, decompress and decode every record, report bytes and CPU per topic
  copy      mirror a topic into one topic per codec/level (same records, partitions, keys, timestamps, headers)
  compare   copy a topic into one topic per codec/level, read them back, report cost and savings, recommend one
  audit     every topic of a cluster, read-only: today's codec, the codec to change to, what it saves, ranked
  bench     sweep every codec and level over real record batches in memory (a file, or a topic's batches read-only):
            ratio, compress and decompress MB/s`

type Command = (argv: readonly string[]) => Promise<number>

// Each command's modules load when it runs: loading all of them was a fifth of a short `produce`'s CPU.
const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  produce: async () => (await import('../producer/main.js')).produceMain,
  consume: async () => (await import('../consumer/main.js')).consumeMain,
  copy: async () => (await import('../copier/main.js')).copyMain,
  compare: async () => (await import('../compare/main.js')).compareMain,
  audit: async () => (await import('../audit/main.js')).auditMain,
  bench: async () => (await import('../bench/main.js')).benchMain
}

await runCommand(async () => {
  const [command, ...rest] = process.argv.slice(2)
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    const { helpFor } = await import('../../lib/terminal/help-layout.js')
    process.stdout.write(`${helpFor(process.stdout, USAGE)}\n`)
    return command === undefined ? 2 : 0
  }
  if (command === '--version' || command === '-V' || command === 'version') {
    const { squeezeVersion } = await import('../../lib/service/version.js')
    process.stdout.write(`squeeze ${squeezeVersion()} (Node ${process.version})\n`)
    return 0
  }
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined
  if (load === undefined) {
    process.stderr.write(`squeeze: unknown command "${command}"; commands: ${Object.keys(COMMANDS).join(', ')}\n`)
    return 2
  }
  const run = await load()
  // A service runs until it is stopped, maybe killed: keep what its start-up compiled now rather than at exit.
  flushCompileCache()
  return run(rest)
})
