/** A report's or help's width when stdout is not a terminal (a pipe, a file, a CI log) and COLUMNS is not set. */
export const DEFAULT_WIDTH = 100

/**
 * How wide `stream` is: its own width when it is a terminal, else COLUMNS when that is a positive whole number (as
 * other command-line tools read it: `COLUMNS=80 squeeze audit ... | less`), else DEFAULT_WIDTH.
 */
export function streamWidth(
  stream: { readonly isTTY?: boolean; readonly columns?: number },
  env: NodeJS.ProcessEnv = process.env
): number {
  if (stream.isTTY === true && stream.columns !== undefined && stream.columns > 0) return stream.columns
  const columns = /^[1-9][0-9]{0,3}$/.test(env.COLUMNS ?? '') ? Number(env.COLUMNS) : undefined
  return columns ?? DEFAULT_WIDTH
}
