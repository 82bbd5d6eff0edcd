import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * capnp-gen: typed TypeScript readers and writers from a Cap'n Proto schema, for the subset squeeze's records use:
 * top-level structs of UInt8/16/32/64, Float32/64, Text and nested-enum fields, all defaults zero. It parses the
 * schema itself and lays the struct out with the compiler's algorithm, so the build needs no `capnp` binary (no
 * apt package, no root); the golden tests hold its layout to the one `capnp encode` produces. Anything outside
 * the subset is an error naming the line, not code that reads the wrong bytes.
 *
 *   node tools/capnp-gen.ts [--check] lib/formats/http-request.capnp   # writes lib/formats/http-request.generated.ts
 *
 * It runs under Node's type stripping before tsc, so it uses only erasable syntax and node: imports.
 */

export type ScalarKind = 'u8' | 'u16' | 'u32' | 'u64' | 'f32' | 'f64'
export type FieldKind = ScalarKind | 'text' | 'enum'

export interface EnumDecl {
  readonly name: string
  /** The strings the TypeScript side uses, in ordinal order: an enumerant's $label, else its schema name. */
  readonly labels: readonly string[]
}

export interface FieldDecl {
  readonly name: string
  readonly ordinal: number
  readonly type: string
  readonly doc: string | undefined
  readonly line: number
}

export interface StructDecl {
  readonly name: string
  readonly fields: readonly FieldDecl[]
  readonly enums: readonly EnumDecl[]
}

export interface SchemaFile {
  readonly id: bigint
  readonly structs: readonly StructDecl[]
}

export interface LaidOutField {
  readonly name: string
  readonly kind: FieldKind
  /** Byte offset in the data section; for text, the pointer index. */
  readonly at: number
  readonly doc: string | undefined
  readonly enumName: string | undefined
}

export interface StructLayout {
  readonly name: string
  /** The struct's type id, as the capnp compiler derives it from the file id and the name. */
  readonly id: string
  readonly dataWords: number
  readonly pointers: number
  /** In ordinal order. */
  readonly fields: readonly LaidOutField[]
  readonly enums: readonly EnumDecl[]
}

const SCALAR_TYPES: Readonly<Record<string, { kind: ScalarKind; lgBits: number }>> = {
  UInt8: { kind: 'u8', lgBits: 3 },
  UInt16: { kind: 'u16', lgBits: 4 },
  UInt32: { kind: 'u32', lgBits: 5 },
  UInt64: { kind: 'u64', lgBits: 6 },
  Float32: { kind: 'f32', lgBits: 5 },
  Float64: { kind: 'f64', lgBits: 6 }
}
const ENUM_LG_BITS = 4

export class SchemaError extends Error {
  constructor(line: number, message: string) {
    super(`capnp-gen: line ${line}: ${message}`)
  }
}

interface Token {
  readonly text: string
  readonly line: number
}

const TOKEN = /\s+|#[^\n]*|@0x[0-9a-fA-F]+|@\d+|"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|[{}();:$=,.[\]]|\S/g

/** The schema's tokens, and each line's comment (what a field's trailing `# ...` documents). */
function tokenize(source: string): { tokens: Token[]; comments: Map<number, string> } {
  const tokens: Token[] = []
  const comments = new Map<number, string>()
  let line = 1
  for (const match of source.matchAll(TOKEN)) {
    const text = match[0]
    if (text.startsWith('#')) comments.set(line, text.slice(1).trim())
    else if (!/^\s/.test(text)) tokens.push({ text, line })
    line += text.split('\n').length - 1
  }
  return { tokens, comments }
}

class Parser {
  private at = 0
  private readonly tokens: readonly Token[]
  private readonly comments: ReadonlyMap<number, string>

  constructor(tokens: readonly Token[], comments: ReadonlyMap<number, string>) {
    this.tokens = tokens
    this.comments = comments
  }

  private peek(): Token {
    return this.tokens[this.at] ?? { text: '<end of file>', line: this.tokens.at(-1)?.line ?? 1 }
  }

  private next(): Token {
    const token = this.peek()
    this.at++
    return token
  }

  private expect(text: string): Token {
    const token = this.next()
    if (token.text !== text) throw new SchemaError(token.line, `expected '${text}', found '${token.text}'`)
    return token
  }

  private identifier(): Token {
    const token = this.next()
    if (!/^[A-Za-z_]/.test(token.text)) throw new SchemaError(token.line, `expected a name, found '${token.text}'`)
    return token
  }

  private ordinal(): number {
    const token = this.next()
    if (!/^@\d+$/.test(token.text)) throw new SchemaError(token.line, `expected an ordinal (@N), found '${token.text}'`)
    return Number(token.text.slice(1))
  }

  file(): SchemaFile {
    const idToken = this.next()
    if (!/^@0x[0-9a-fA-F]+$/.test(idToken.text))
      throw new SchemaError(idToken.line, 'the file must start with its @0x id')
    this.expect(';')
    const structs: StructDecl[] = []
    while (this.at < this.tokens.length) {
      const token = this.next()
      if (token.text === 'struct') structs.push(this.struct())
      else if (token.text === 'annotation') this.annotationDecl()
      else throw new SchemaError(token.line, `'${token.text}' is not supported at the top level (struct, annotation)`)
    }
    return { id: BigInt(idToken.text.slice(1)), structs }
  }

  /** `annotation label(enumerant) :Text;`, the one annotation capnp-gen reads. */
  private annotationDecl(): void {
    const name = this.identifier()
    if (name.text !== 'label')
      throw new SchemaError(name.line, `unknown annotation '${name.text}' (capnp-gen reads $label)`)
    for (const text of ['(', 'enumerant', ')', ':', 'Text', ';']) this.expect(text)
  }

  private struct(): StructDecl {
    const name = this.identifier().text
    this.expect('{')
    const fields: FieldDecl[] = []
    const enums: EnumDecl[] = []
    while (this.peek().text !== '}') {
      const token = this.next()
      if (token.text === 'enum') enums.push(this.enumDecl())
      else if (token.text === 'struct' || token.text === 'union' || token.text === 'using' || token.text === 'const') {
        throw new SchemaError(token.line, `'${token.text}' inside a struct is not supported`)
      } else fields.push(this.field(token))
    }
    this.expect('}')
    return { name, fields, enums }
  }

  private field(name: Token): FieldDecl {
    if (!/^[a-z][A-Za-z0-9]*$/.test(name.text)) throw new SchemaError(name.line, `'${name.text}' is not a field name`)
    const ordinal = this.ordinal()
    this.expect(':')
    const type = this.identifier()
    const after = this.next()
    if (after.text === '=')
      throw new SchemaError(after.line, `field '${name.text}' has a default; capnp-gen needs zero defaults`)
    if (after.text !== ';')
      throw new SchemaError(after.line, `expected ';' after field '${name.text}', found '${after.text}'`)
    return { name: name.text, ordinal, type: type.text, doc: this.comments.get(name.line), line: name.line }
  }

  private enumDecl(): EnumDecl {
    const name = this.identifier().text
    this.expect('{')
    const labels: string[] = []
    while (this.peek().text !== '}') {
      const enumerant = this.identifier()
      const ordinal = this.ordinal()
      if (ordinal !== labels.length) {
        throw new SchemaError(
          enumerant.line,
          `enumerant '${enumerant.text}' is @${ordinal}, expected @${labels.length}`
        )
      }
      labels.push(this.peek().text === '$' ? this.label() : enumerant.text)
      this.expect(';')
    }
    this.expect('}')
    return { name, labels }
  }

  private label(): string {
    this.expect('$')
    const name = this.identifier()
    if (name.text !== 'label') throw new SchemaError(name.line, `unknown annotation '$${name.text}'`)
    this.expect('(')
    const value = this.next()
    if (!value.text.startsWith('"')) throw new SchemaError(value.line, '$label takes a string')
    this.expect(')')
    return JSON.parse(value.text) as string
  }
}

export function parseSchema(source: string): SchemaFile {
  const { tokens, comments } = tokenize(source)
  return new Parser(tokens, comments).file()
}

/**
 * The compiler's data-section allocator (StructLayout::HoleSet in capnp's node-translator.c++): a field takes the
 * smallest free hole of its size, splitting a larger hole in two, else a new word whose rest becomes holes.
 * Offsets are in units of the field's size.
 */
class DataAllocator {
  words = 0
  private readonly holes = [0, 0, 0, 0, 0, 0]

  allocate(lgBits: number): number {
    const hole = this.tryHole(lgBits)
    if (hole !== undefined) return hole
    const offset = this.words++ << (6 - lgBits)
    for (let lg = lgBits, at = offset + 1; lg < 6; lg++, at = (at + 1) >> 1) this.holes[lg] = at
    return offset
  }

  private tryHole(lgBits: number): number | undefined {
    if (lgBits >= 6) return undefined
    const hole = this.holes[lgBits] as number
    if (hole !== 0) {
      this.holes[lgBits] = 0
      return hole
    }
    const larger = this.tryHole(lgBits + 1)
    if (larger === undefined) return undefined
    this.holes[lgBits] = larger * 2 + 1
    return larger * 2
  }
}

/** The id capnp gives a declaration nested in `parent`: MD5 of the parent id (little-endian) and the name. */
export function childId(parent: bigint, name: string): bigint {
  const parentBytes = Buffer.alloc(8)
  parentBytes.writeBigUInt64LE(parent)
  const digest = createHash('md5').update(parentBytes).update(name).digest()
  return digest.readBigUInt64BE(0) | (1n << 63n)
}

export function layoutStruct(file: SchemaFile, struct: StructDecl): StructLayout {
  const fields = [...struct.fields].sort((a, b) => a.ordinal - b.ordinal)
  const data = new DataAllocator()
  let pointers = 0
  const laidOut = fields.map((field, i): LaidOutField => {
    if (field.ordinal !== i)
      throw new SchemaError(field.line, `field '${field.name}' is @${field.ordinal}, expected @${i}`)
    const base = { name: field.name, doc: field.doc }
    if (field.type === 'Text') return { ...base, kind: 'text', at: pointers++, enumName: undefined }
    const scalar = SCALAR_TYPES[field.type]
    if (scalar !== undefined) {
      return {
        ...base,
        kind: scalar.kind,
        at: (data.allocate(scalar.lgBits) << scalar.lgBits) / 8,
        enumName: undefined
      }
    }
    if (struct.enums.some((e) => e.name === field.type)) {
      return { ...base, kind: 'enum', at: (data.allocate(ENUM_LG_BITS) << ENUM_LG_BITS) / 8, enumName: field.type }
    }
    throw new SchemaError(
      field.line,
      `type '${field.type}' of '${field.name}' is not supported (UInt8/16/32/64, Float32/64, Text, enums)`
    )
  })
  return {
    name: struct.name,
    id: childId(file.id, struct.name).toString(16),
    dataWords: data.words,
    pointers,
    fields: laidOut,
    enums: struct.enums
  }
}

/** HttpRequest -> HTTP_REQUEST */
function constantCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()
}

const SCALAR_TS: Readonly<Record<FieldKind, string>> = {
  u8: 'number',
  u16: 'number',
  u32: 'number',
  u64: 'bigint',
  f32: 'number',
  f64: 'number',
  text: 'string',
  enum: ''
}
const SETTER: Readonly<Record<ScalarKind, string>> = {
  u8: 'setUint8',
  u16: 'setUint16',
  u32: 'setUint32',
  u64: 'setBigUint64',
  f32: 'setFloat32',
  f64: 'setFloat64'
}
const WIDTH: Readonly<Record<Exclude<FieldKind, 'text'>, number>> = {
  u8: 1,
  u16: 2,
  enum: 2,
  u32: 4,
  f32: 4,
  u64: 8,
  f64: 8
}

/** Names of one struct's generated declarations. */
class Names {
  readonly struct: string
  readonly constant: string
  constructor(struct: string) {
    this.struct = struct
    this.constant = constantCase(struct)
  }
  enumType(name: string): string {
    return this.struct + name
  }
  enumNames(name: string): string {
    return `${this.constant}_${constantCase(name)}_NAMES`
  }
  enumOrdinals(name: string): string {
    return `${this.constant}_${constantCase(name)}_ORDINALS`
  }
}

const MAX_LINE = 120

/** `head` + items + `tail` on one line when it fits in MAX_LINE, else one item a line, as a formatter would. */
function wrap(indent: string, head: string, items: readonly string[], tail: string, separator = ', '): string {
  const flat = `${indent}${head}${items.join(separator)}${tail}`
  if (flat.length <= MAX_LINE) return flat
  const inner = `${indent}  `
  if (separator === ' + ') return `${indent}${head.trimEnd()}\n${inner}${items.join(`\n${inner}+ `)}${tail}`
  const lines = items.map((item) => `${inner}${item}`).join(',\n')
  return `${indent}${head.trimEnd()}\n${lines}\n${indent}${tail.trimStart()}`
}

const HEADER_BYTES = 8
const ROOT_POINTER_BYTES = 8

function doc(text: string | undefined, indent: string): string[] {
  return text === undefined ? [] : [`${indent}/** ${text} */`]
}

function emitEnums(layout: StructLayout, n: Names): string[] {
  return layout.enums.flatMap((e) => [
    `/** ${layout.name}.${e.name}: the names in ordinal order; the index is the wire value. */`,
    wrap(
      '',
      `export const ${n.enumNames(e.name)} = [`,
      e.labels.map((l) => `'${l}'`),
      '] as const'
    ),
    `export type ${n.enumType(e.name)} = (typeof ${n.enumNames(e.name)})[number]`,
    `const ${n.enumOrdinals(e.name)} = enumOrdinals(${n.enumNames(e.name)})`,
    ''
  ])
}

function fieldType(field: LaidOutField, n: Names): string {
  return field.enumName === undefined ? SCALAR_TS[field.kind] : n.enumType(field.enumName)
}

function emitTypes(layout: StructLayout, n: Names): string[] {
  const numbers = layout.fields.filter((f) => f.kind !== 'text' && f.kind !== 'u64')
  return [
    `/** One ${layout.name} as a plain object: what the readers return and the writers take. */`,
    `export interface ${layout.name}Fields {`,
    ...layout.fields.flatMap((f) => [...doc(f.doc, '  '), `  ${f.name}: ${fieldType(f, n)}`]),
    '}',
    '',
    `/** The fields of ${layout.name} that are neither text nor u64, as numbers (an enum its ordinal). */`,
    `export interface ${layout.name}Numbers {`,
    ...numbers.map((f) => `  ${f.name}: number`),
    '}',
    '',
    `export type ${layout.name}Spans = StructSpans<${layout.name}Numbers>`,
    ''
  ]
}

function emitTables(layout: StructLayout, n: Names): string[] {
  const entry = (f: LaidOutField): string => {
    const names = f.enumName === undefined ? '' : `, names: ${n.enumNames(f.enumName)}`
    return `  { name: '${f.name}', kind: '${f.kind}', at: ${f.at}${names} }`
  }
  const texts = layout.fields.filter((f) => f.kind === 'text')
  const u64s = layout.fields.filter((f) => f.kind === 'u64')
  const scalarsEnd = Math.max(0, ...layout.fields.map((f) => (f.kind === 'text' ? 0 : f.at + WIDTH[f.kind])))
  return [
    `/** Every field in ordinal order, with its data-section byte offset or, for text, its pointer index. */`,
    `export const ${n.constant}_SCHEMA = [`,
    layout.fields.map(entry).join(',\n'),
    '] as const',
    `export const ${n.constant}_FIELD_COUNT = ${layout.fields.length}`,
    `/** The text fields' pointer indexes, in ordinal order. */`,
    `export const ${n.constant}_TEXT_POINTERS: readonly number[] = [${texts.map((f) => f.at).join(', ')}]`,
    `/** Where the last scalar field ends: the scalars cover the data section up to here. */`,
    `export const ${n.constant}_SCALARS_END = ${scalarsEnd}`,
    `/** Where each text field's range starts in ${layout.name}Spans.text. */`,
    wrap(
      '',
      `export const ${n.constant}_TEXT_SLOTS = { `,
      texts.map((f) => `${f.name}: ${f.at * 2}`),
      ' } as const'
    ),
    `/** Where each u64 field's low half is in ${layout.name}Spans.u64. */`,
    wrap(
      '',
      `export const ${n.constant}_U64_SLOTS = { `,
      u64s.map((f) => `${f.name}: ${f.at / 4}`),
      ' } as const'
    ),
    ''
  ]
}

function defaultValue(field: LaidOutField, layout: StructLayout): string {
  if (field.kind === 'text') return "''"
  if (field.kind === 'u64') return '0n'
  const e = layout.enums.find((candidate) => candidate.name === field.enumName)
  return e === undefined ? '0' : `'${e.labels[0] ?? ''}'`
}

function readExpression(field: LaidOutField, n: Names): string {
  if (field.kind === 'text') return `text(s, ${field.at})`
  if (field.enumName !== undefined) return `enumName(${n.enumNames(field.enumName)}, u16(s, ${field.at}))`
  return `${field.kind}(s, ${field.at})`
}

function emitReader(layout: StructLayout, n: Names): string[] {
  const name = layout.name
  return [
    `/** A fresh ${name} with every field at its default, as one object literal: a parser makes one per line. */`,
    `export function empty${name}(): ${name}Fields {`,
    wrap(
      '  ',
      'return { ',
      layout.fields.map((f) => `${f.name}: ${defaultValue(f, layout)}`),
      ' }'
    ),
    '}',
    '',
    `/**`,
    ` * Reads the ${name} at the root of the segment \`buf[seg, seg + segLen)\` into one object literal:`,
    ' * one allocation of one hidden class per record. Throws what rootStruct and text throw.',
    ' */',
    `export function read${name}Segment(buf: Buffer, seg: number, segLen: number): ${name}Fields {`,
    '  const s = rootStruct(buf, seg, segLen) ?? EMPTY_VIEW',
    '  return {',
    layout.fields.map((f) => `    ${f.name}: ${readExpression(f, n)}`).join(',\n'),
    '  }',
    '}',
    ''
  ]
}

/** The statements that zero what no field covers: the segment count, the root pointer's offset, any data gap. */
function unwrittenBytes(layout: StructLayout): string[] {
  const covered = new Uint8Array(layout.dataWords * 8)
  for (const f of layout.fields) if (f.kind !== 'text') covered.fill(1, f.at, f.at + WIDTH[f.kind])
  const dataAt = HEADER_BYTES + ROOT_POINTER_BYTES
  const gaps = [...covered.keys()].filter((i) => covered[i] === 0).map((i) => `  buf[s + ${dataAt + i}] = 0`)
  return ['  v.setUint32(s, 0, true)', `  v.setUint32(s + ${HEADER_BYTES}, 0, true)`, ...gaps]
}

/** The frame both writers share around their field statements: header, root pointer, then the segment size. */
function writerBody(layout: StructLayout, locals: string[], statements: string[]): string[] {
  const dataAt = HEADER_BYTES + ROOT_POINTER_BYTES
  const fixed = dataAt + layout.dataWords * 8 + layout.pointers * 8
  const rootPointerHi = layout.dataWords | (layout.pointers << 16)
  return [
    ...locals,
    `  const d = s + ${dataAt}`,
    `  let end = s + ${fixed}`,
    ...unwrittenBytes(layout),
    `  v.setUint32(s + ${HEADER_BYTES + 4}, ${rootPointerHi}, true)`,
    ...statements,
    `  v.setUint32(s + 4, (end - s - ${HEADER_BYTES}) / 8, true)`,
    '  return end'
  ]
}

function pointerAt(layout: StructLayout, index: number): number {
  return HEADER_BYTES + ROOT_POINTER_BYTES + layout.dataWords * 8 + index * 8
}

function writeStatement(layout: StructLayout, f: LaidOutField, n: Names): string {
  const value = `f.${f.name}`
  if (f.kind === 'text') return `  end = putText(buf, v, s + ${pointerAt(layout, f.at)}, end, ${value})`
  if (f.kind === 'enum')
    return `  v.setUint16(d + ${f.at}, ${n.enumOrdinals(f.enumName ?? '')}.get(${value}) ?? 0, true)`
  return `  v.${SETTER[f.kind]}(d + ${f.at}, ${value}, true)`
}

function spanStatement(layout: StructLayout, f: LaidOutField): string {
  if (f.kind === 'text') {
    const range = `t[${f.at * 2}] as number, t[${f.at * 2 + 1}] as number`
    return `  end = putSpan(buf, v, s + ${pointerAt(layout, f.at)}, end, src, ${range})`
  }
  if (f.kind === 'u64') {
    const low = `  v.setUint32(d + ${f.at}, w[${f.at / 4}] as number, true)`
    return `${low}\n  v.setUint32(d + ${f.at + 4}, w[${f.at / 4 + 1}] as number, true)`
  }
  return `  v.${f.kind === 'enum' ? 'setUint16' : SETTER[f.kind]}(d + ${f.at}, n.${f.name}, true)`
}

function emitWriters(layout: StructLayout, n: Names): string[] {
  const name = layout.name
  const texts = layout.fields.filter((f) => f.kind === 'text')
  const fixed = HEADER_BYTES + ROOT_POINTER_BYTES + layout.dataWords * 8 + layout.pointers * 8
  const numbers = layout.fields.filter((f) => f.kind !== 'text' && f.kind !== 'u64')
  return [
    '/**',
    ` * Writes one ${name} at \`s\` of \`buf\` (\`v\` a view of the same memory), every byte of it`,
    ` * (the room need not be zeroed), within \`s + max${name}Bytes(f)\`, and returns where it ends. Text goes`,
    " * in ordinal order, which is capnp-ts's allocation order and what the golden bytes pin.",
    ' */',
    `export function write${name}At(buf: Buffer, v: DataView, s: number, f: ${name}Fields): number {`,
    ...writerBody(
      layout,
      [],
      layout.fields.map((f) => writeStatement(layout, f, n))
    ),
    '}',
    '',
    `/** The most bytes write${name}At writes for \`f\`: 3 UTF-8 bytes a UTF-16 unit, each NUL and padding. */`,
    `export function max${name}Bytes(f: ${name}Fields): number {`,
    wrap('  ', 'const units = ', texts.length === 0 ? ['0'] : texts.map((f) => `f.${f.name}.length`), '', ' + '),
    `  return ${fixed} + ${texts.length} * TEXT_OVERHEAD + units * MAX_UTF8_PER_UNIT`,
    '}',
    '',
    `/** write${name}At's twin for spans: the same bytes for the same record. */`,
    `export function write${name}SpansAt(buf: Buffer, v: DataView, s: number, p: ${name}Spans): number {`,
    ...writerBody(
      layout,
      ['  const src = p.src', '  const t = p.text', '  const n = p.values', '  const w = p.u64'],
      layout.fields.map((f) => spanStatement(layout, f))
    ),
    '}',
    '',
    `/** The most bytes write${name}SpansAt writes for \`spans\`: fixed part, each text's bytes, NUL and padding. */`,
    `export function max${name}SpansBytes(spans: ${name}Spans): number {`,
    '  const text = spans.text',
    `  let bytes = ${fixed} + ${texts.length} * TEXT_OVERHEAD`,
    '  for (let i = 0; i < text.length; i += 2) bytes += (text[i + 1] as number) - (text[i] as number)',
    '  return bytes',
    '}',
    '',
    `/** Spans for a ${name} with every field at its default (all zero, every text empty). */`,
    `export function empty${name}Spans(): ${name}Spans {`,
    wrap(
      '  ',
      `const values: ${name}Numbers = { `,
      numbers.map((f) => `${f.name}: 0`),
      ' }'
    ),
    `  const text = new Int32Array(${layout.pointers * 2})`,
    `  return { src: Buffer.alloc(0), text, u64: new Uint32Array(${layout.dataWords * 2}), values }`,
    '}',
    ''
  ]
}

const RUNTIME_IMPORTS = [
  'EMPTY_VIEW',
  'MAX_UTF8_PER_UNIT',
  'TEXT_OVERHEAD',
  'enumName',
  'enumOrdinals',
  'f32',
  'f64',
  'putSpan',
  'putText',
  'rootStruct',
  'text',
  'u16',
  'u32',
  'u64',
  'u8',
  'type StructSpans'
]

/** The TypeScript module for `source`, the text of the schema file named `schemaName`. */
export function generate(source: string, schemaName: string): string {
  const file = parseSchema(source)
  const body = file.structs.flatMap((struct) => {
    const layout = layoutStruct(file, struct)
    const n = new Names(layout.name)
    return [
      `/** ${layout.name}: ${layout.dataWords} data words and ${layout.pointers} pointers. */`,
      `export const ${n.constant}_ID = '${layout.id}'`,
      `export const ${n.constant}_DATA_BYTES = ${layout.dataWords * 8}`,
      `export const ${n.constant}_POINTERS = ${layout.pointers}`,
      '',
      ...emitEnums(layout, n),
      ...emitTypes(layout, n),
      ...emitTables(layout, n),
      ...emitReader(layout, n),
      ...emitWriters(layout, n)
    ]
  })
  const text = body.join('\n')
  const used = RUNTIME_IMPORTS.filter((name) => new RegExp(`\\b${name.replace('type ', '')}\\b`).test(text))
  return (
    [
      `// Generated by tools/capnp-gen.ts from ${schemaName}; \`npm run build\` writes it again. Do not edit.`,
      `import {\n${used.map((name) => `  ${name}`).join(',\n')}\n} from './capnp-wire.js'`,
      '',
      text
    ]
      .join('\n')
      .trimEnd() + '\n'
  )
}

/** Where the module for a schema goes: beside it, `x.capnp` -> `x.generated.ts`. */
export function outputPath(schemaPath: string): string {
  if (!schemaPath.endsWith('.capnp')) throw new Error(`capnp-gen: ${schemaPath} is not a .capnp file`)
  return schemaPath.replace(/\.capnp$/, '.generated.ts')
}

function main(argv: readonly string[]): number {
  const check = argv.includes('--check')
  const schemas = argv.filter((arg) => arg !== '--check')
  if (schemas.length === 0) {
    console.error('usage: node tools/capnp-gen.ts [--check] <schema.capnp>...')
    return 2
  }
  let stale = 0
  for (const schema of schemas) {
    const out = outputPath(schema)
    const code = generate(readFileSync(schema, 'utf8'), basename(schema))
    let current: string | undefined
    try {
      current = readFileSync(out, 'utf8')
    } catch {
      current = undefined
    }
    if (current === code) continue
    if (check) {
      console.error(`capnp-gen: ${out} is stale; run npm run build`)
      stale++
    } else {
      writeFileSync(out, code)
      console.error(`capnp-gen: wrote ${out}`)
    }
  }
  return stale === 0 ? 0 : 1
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.exitCode = main(process.argv.slice(2))
