import { regexLineFormat } from './regex-line-format.js'
import type { LogFormat } from './log-format.js'

/** time, level, pid, tid, optional connection id, message (nginx default error_log format). */
export const NGINX_ERROR_LINE =
  /^(\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2}) \[(debug|info|notice|warn|error|crit|alert|emerg)\] (\d+)#(\d+): (?:\*(\d+) )?(.*)$/

export const nginxErrorFormat: LogFormat = regexLineFormat('nginx-error', NGINX_ERROR_LINE, 'nginx error log')
