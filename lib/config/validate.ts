import type { z } from 'zod'
import { ErrorCodes, SqueezeError } from '../errors.js'

/** Validates once, reporting every problem in one line, and returns a frozen object. */
export function validateConfig<T extends z.ZodTypeAny>(schema: T, input: unknown, what: string): Readonly<z.infer<T>> {
  const result = schema.safeParse(input)
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const path = issue.path.join('.')
      if (issue.code === 'unrecognized_keys')
        return `unknown setting${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`
      return path === '' ? issue.message : `${path}: ${issue.message}`
    })
    throw new SqueezeError(ErrorCodes.CONFIG_INVALID, `invalid ${what}: ${problems.join('; ')}`)
  }
  return Object.freeze(result.data) as Readonly<z.infer<T>>
}
