/** Bytes in the largest binary unit up to GiB, for tables and progress lines. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(2)}GiB`
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(2)}MiB`
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)}KiB`
  return `${bytes}B`
}
