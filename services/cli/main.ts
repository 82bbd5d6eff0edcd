#!/usr/bin/env node
import { benchMain } from '../bench/main.js'
import { compareMain } from '../compare/main.js'
import { consumeMain } from '../consumer/main.js'
import { copyMain } from '../copier/main.js'
import { produceMain } from '../producer/main.js'
import { runCommand } from '../../lib/service/lifecycle.js'
import { dropNegativeTimeoutWarnings } from '../../lib/service/process-warnings.js'

const USAGE = `squeeze: measure what each Kafka compression codec and level costs and saves on your own logs.

Usage: squeeze <command> [options]   (squeeze <command> --help for details)

Commands:
  produce   read or generate log records, batch per partition, compress with a codec and level, send to Kafka
  consume   read topics, decompress and decode every record, report bytes and CPU per topic
  copy      mirror a topic into one topic per codec/level (same records, partitions, keys, timestamps, headers)
  compare   copy a topic into one topic per codec/level, read them back, report cost and savings, recommend one
  bench     sweep every codec and level over real record batches in memory (a file, or a topic's batches read-only):
            ratio, compress and decompress MB/s`

const COMMANDS: Readonly<Record<string, (argv: readonly string[]) => Promise<number>>> = {
  produce: produceMain,
  consume: consumeMain,
  copy: copyMain,
  compare: compareMain,
  bench: benchMain
}

dropNegativeTimeoutWarnings()
await runCommand(async () => {
  const [command, ...rest] = process.argv.slice(2)
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`)
    return command === undefined ? 2 : 0
  }
  const main = COMMANDS[command]
  if (main === undefined) {
    process.stderr.write(`squeeze: unknown command "${command}"; commands: ${Object.keys(COMMANDS).join(', ')}\n`)
    return 2
  }
  return main(rest)
})
