import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { childId, generate, layoutStruct, parseSchema, SchemaError } from '../../tools/capnp-gen.js'
import { repoRoot } from '../helpers/repo-root.js'

/**
 * A schema that exercises the compiler's hole filling (small fields after a wide one go back into the first word).
 * The offsets below are what `capnp compile -ocapnp` (capnp 0.9) prints for it; the tool is not needed here.
 */
const MIXED = `@0xd5c1e9d9b1a2c3f4;
struct Mixed {
  a @0 :UInt8;
  b @1 :UInt64;
  c @2 :UInt16;
  d @3 :UInt8;
  e @4 :UInt32;
  f @5 :Text;
  g @6 :Float64;
  h @7 :UInt8;
  i @8 :UInt16;
  j @9 :Float32;
  k @10 :Text;
}
`
const MIXED_LAYOUT = { a: 0, b: 8, c: 2, d: 1, e: 4, f: 0, g: 16, h: 24, i: 26, j: 28, k: 1 }

function layoutOf(source: string): ReturnType<typeof layoutStruct> {
  const file = parseSchema(source)
  const struct = file.structs[0]
  assert.ok(struct !== undefined)
  return layoutStruct(file, struct)
}

describe('capnp-gen', () => {
  it('the checked-in http-request.generated.ts is what the generator makes of http-request.capnp', () => {
    const dir = join(repoRoot(), 'lib', 'formats')
    const schema = readFileSync(join(dir, 'http-request.capnp'), 'utf8')
    const checkedIn = readFileSync(join(dir, 'http-request.generated.ts'), 'utf8')
    assert.ok(
      generate(schema, 'http-request.capnp') === checkedIn,
      'lib/formats/http-request.generated.ts is stale: run `npm run build` and commit the result'
    )
  })

  it('lays out data and pointers as the capnp compiler does, holes filled in ordinal order', () => {
    const layout = layoutOf(MIXED)
    assert.deepEqual(Object.fromEntries(layout.fields.map((f) => [f.name, f.at])), MIXED_LAYOUT)
    assert.equal(layout.dataWords, 4)
    assert.equal(layout.pointers, 2)
  })

  it('derives a struct id from the file id and its name as the compiler does', () => {
    assert.equal(childId(0xd5c1e9d9b1a2c3f4n, 'Mixed').toString(16), 'f4d4e4734b8dd2af')
    assert.equal(layoutOf(MIXED).id, 'f4d4e4734b8dd2af')
  })

  it('reads enumerant labels and field comments', () => {
    const source = `@0xd5c1e9d9b1a2c3f4;
annotation label(enumerant) :Text;
struct R {
  level @0 :Level;   # how bad
  enum Level {
    info @0;
    warn @1 $label("WARNING");
  }
}
`
    const layout = layoutOf(source)
    assert.deepEqual(layout.enums, [{ name: 'Level', labels: ['info', 'WARNING'] }])
    assert.deepEqual(layout.fields, [{ name: 'level', kind: 'enum', at: 0, doc: 'how bad', enumName: 'Level' }])
    assert.match(generate(source, 'r.capnp'), /export const R_LEVEL_NAMES = \['info', 'WARNING'\] as const/)
  })

  it('refuses what it does not generate, naming the line', () => {
    const refusals: Array<[string, RegExp]> = [
      ['@0xd5c1e9d9b1a2c3f4;\nstruct S {\n  x @0 :List(Text);\n}\n', /line 3: expected ';' after field 'x'/],
      ['@0xd5c1e9d9b1a2c3f4;\nstruct S {\n  x @0 :Int32;\n}\n', /line 3: type 'Int32' of 'x' is not supported/],
      ['@0xd5c1e9d9b1a2c3f4;\nstruct S {\n  x @0 :UInt16 = 7;\n}\n', /line 3: field 'x' has a default/],
      ['@0xd5c1e9d9b1a2c3f4;\nstruct S {\n  x @1 :UInt16;\n}\n', /line 3: field 'x' is @1, expected @0/],
      ['@0xd5c1e9d9b1a2c3f4;\nstruct S {\n  union {\n  }\n}\n', /line 3: 'union' inside a struct is not supported/],
      ['struct S {}\n', /line 1: the file must start with its @0x id/]
    ]
    for (const [source, message] of refusals) {
      assert.throws(
        () => layoutOf(source),
        (err: unknown) => err instanceof SchemaError && message.test(err.message)
      )
    }
  })
})
