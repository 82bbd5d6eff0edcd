import { readFileSync } from 'node:fs'

/** squeeze's version, from its package.json: reports name the build that made them. */
export function squeezeVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
}
