/** A report's or help's width when stdout is not a terminal (a pipe, a file, a CI log). */
export const DEFAULT_WIDTH = 100

/** How wide `stream` is: its own width when it is a terminal, else DEFAULT_WIDTH. */
export function streamWidth(stream: { readonly isTTY?: boolean; readonly columns?: number }): number {
  return stream.isTTY === true && stream.columns !== undefined && stream.columns > 0 ? stream.columns : DEFAULT_WIDTH
}
