import type { ApplyAs, ClientApply } from '../apply/apply-as.js'
import type { SettingsFormat } from '../apply/client-settings.js'
import { formatNumber } from './table.js'
import { WIDE, wrapLines, type TerminalLayout } from './terminal.js'

/**
 * The per-client verdict as a short terminal block: one line per client, then the batching and topic lines, wrapped
 * to the layout. The topic command keeps shell line continuations and the settings blocks stay as written, so both
 * paste as they are.
 */
export function renderApplyText(apply: ApplyAs, showSettings: boolean, layout: TerminalLayout = WIDE): string {
  if (apply.keep !== null) return `${wrapLines(keepLine(apply.keep), layout)}\n`
  const width = Math.max(...apply.clients.map((c) => c.client.length))
  const lines = [
    'per client (same run, same rule as the verdict):',
    ...apply.clients.map(
      (c) => `  ${c.client.padEnd(width)}  ${(c.target ?? '-').padEnd(8)} ${ratioText(c).padEnd(13)} ${c.text}`
    ),
    ...adviceLines(apply),
    ...(apply.topic === null ? [] : [`topic: ${apply.topic.text}`])
  ]
  const summary = [
    wrapLines(lines.join('\n'), layout),
    ...(apply.topic === null ? [] : [`  ${shellLines(apply.topic.command)}`])
  ]
  if (!showSettings) return `${[...summary, "  (--show-settings prints each client's settings to paste)"].join('\n')}\n`
  const blocks = apply.clients.flatMap((c) =>
    c.settings === null
      ? []
      : [
          '',
          `${c.client} (${c.settings.target}, ${c.settings.format}):`,
          c.settings.text.trimEnd(),
          ...c.settings.notes.map((n) => `  note: ${n}`),
          ...(c.caveat === null ? [] : [`  caveat: ${c.caveat}`])
        ]
  )
  return `${[...summary, ...blocks].join('\n')}\n`
}

/** kafka-configs.sh's command broken before --alter and --add-config with shell continuations. */
function shellLines(command: string): string {
  return command.replace(/ (--alter|--add-config) /g, ' \\\n      $1 ')
}

/** Nothing to apply: the verdict against what the topic stores today is to keep it. */
function keepLine(codec: string): string {
  return `per client: nothing to change; keep ${codec}, which no target beats by the margin (see "against current")`
}

/** The same as a Markdown section: a table of clients, each client's settings in a code block, the topic side. */
export function renderApplyMarkdown(apply: ApplyAs, heading = '## Apply: settings per client'): string {
  if (apply.keep !== null) return [heading, '', `${keepLine(apply.keep)}.`, ''].join('\n')
  const rows = apply.clients.map(
    (c) => `| ${c.client} | ${c.target ?? '-'} | ${ratioText(c)} | ${cell(c.text)} | ${cell(c.source)} |`
  )
  const blocks = apply.clients.flatMap((c) =>
    c.settings === null
      ? []
      : [
          `### ${c.client}: ${c.settings.target}`,
          '',
          `\`\`\`${FENCE[c.settings.format]}`,
          c.settings.text.trimEnd(),
          '```',
          '',
          ...c.settings.notes.map((n) => `- ${n}`),
          ...(c.caveat === null ? [] : [`- ${c.caveat}`]),
          ...(c.settings.notes.length > 0 || c.caveat !== null ? [''] : [])
        ]
  )
  return [
    heading,
    '',
    "Each client's best target among those it can set, by the verdict's own rule, with figures from this run.",
    '',
    '| client | target | ratio | verdict | limit documented at |',
    '| :--- | :--- | ---: | :--- | :--- |',
    ...rows,
    '',
    ...adviceLines(apply).map((l) => `- ${l.trim()}`),
    ...(apply.batchingAdvice === null ? [] : ['']),
    ...blocks,
    ...(apply.topic === null ? [] : ['### Topic', '', apply.topic.text, '', '```sh', apply.topic.command, '```', ''])
  ].join('\n')
}

const FENCE: Readonly<Record<SettingsFormat, string>> = {
  properties: 'properties',
  go: 'go',
  javascript: 'js',
  logstash: 'ruby',
  yaml: 'yaml',
  toml: 'toml',
  'fluent-bit': 'ini',
  shell: 'sh'
}

function adviceLines(apply: ApplyAs): string[] {
  if (apply.batchingAdvice === null) return []
  return [
    `batching is the limit: ${apply.batchingAdvice.reason}`,
    ...apply.clients.filter((c) => c.batchingAdvice !== null).map((c) => `  ${c.client}: ${c.batchingAdvice as string}`)
  ]
}

function ratioText(c: ClientApply): string {
  return c.ratio === null ? '' : `ratio ${formatNumber(c.ratio)}x`
}

function cell(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replaceAll('|', '\\|')
}
