import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Ajv } from 'ajv'
import type { AuditReport, AuditTopic } from '../../lib/audit/audit-report.js'
import { runSqueeze, type SqueezeRun } from './squeeze-cli.js'

function schema(file: string): object {
  return JSON.parse(readFileSync(fileURLToPath(new URL(`../../../schema/${file}`, import.meta.url)), 'utf8')) as object
}

/** An audit's JSON report, checked against its schema (which refers to compare's for the parts they share). */
export function readAuditReport(file: string): AuditReport {
  const report = JSON.parse(readFileSync(file, 'utf8')) as AuditReport
  const validate = new Ajv({ allErrors: true, strict: true })
    .addSchema(schema('compare-report.schema.json'))
    .compile(schema('audit-report.schema.json'))
  assert.equal(validate(report), true, JSON.stringify(validate.errors))
  return report
}

/**
 * `squeeze audit --brokers BROKERS --topics PATTERN --json JSON --quiet ...extra` as a child process, with its
 * report read back (and checked against the schema) and each topic's row by name.
 */
export async function auditCli(
  brokers: readonly string[],
  pattern: string,
  json: string,
  extra: readonly string[]
): Promise<{ run: SqueezeRun; report: AuditReport; row(topic: string): AuditTopic }> {
  const args = ['audit', '--brokers', brokers.join(','), '--topics', pattern, '--json', json, '--quiet', ...extra]
  const run = await runSqueeze(args, { timeoutMs: 600_000 })
  if (!existsSync(json)) assert.fail(`no report (exit ${run.code}):\n${run.stdout}\n${run.stderr}`)
  const report = readAuditReport(json)
  const row = (topic: string): AuditTopic =>
    report.topics.find((x) => x.topic === topic) ?? assert.fail(`${topic} missing from the report`)
  return { run, report, row }
}
