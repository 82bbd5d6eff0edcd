import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const MODULE = fileURLToPath(new URL('../../../lib/service/process-warnings.js', import.meta.url))

function stderrOf(script: string): string {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  return run.stderr
}

test('a negative setTimeout (kafkajs\'s unthrottled request queue) prints nothing; any other warning still prints', () => {
  const negative = 'setTimeout(() => {}, 1 - Date.now())'
  const other = 'process.emitWarning(\'something else\', \'OtherWarning\')'
  // Without the filter, this Node prints the warning: the test would prove nothing on a Node that does not.
  const unfiltered = stderrOf(`${negative}; ${other}`)
  assert.match(unfiltered, /TimeoutNegativeWarning/)
  const filtered = stderrOf(`const { dropNegativeTimeoutWarnings } = await import(${JSON.stringify(MODULE)}); dropNegativeTimeoutWarnings(); ${negative}; ${other}`)
  assert.doesNotMatch(filtered, /TimeoutNegativeWarning/)
  assert.match(filtered, /OtherWarning: something else/)
})
