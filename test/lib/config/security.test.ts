import assert from 'node:assert/strict'
import { createPrivateKey, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { after, before, describe, it } from 'node:test'
import { connectionFrom } from '../../../lib/config/cli.js'
import { securityFrom } from '../../../lib/config/security.js'
import { configError } from '../../helpers/config-error.js'

/** The warnings connectionFrom logs for these TLS flags. */
function warningsFor(flags: Record<string, string>): string[] {
  const warnings: string[] = []
  const log = { warn: (...args: unknown[]) => warnings.push(String(args.find((a) => typeof a === 'string'))) }
  connectionFrom({ brokers: '127.0.0.1:9093', 'security-protocol': 'SSL', ...flags }, {}, log as never)
  return warnings
}

describe('TLS settings that turn checks off are logged as warnings', () => {
  it('certificate verification off: one warning naming the setting', () => {
    const warnings = warningsFor({ 'ssl-reject-unauthorized': 'false' })
    assert.equal(warnings.length, 1)
    assert.match(warnings[0] ?? '', /^TLS certificate verification is off \(--ssl-reject-unauthorized false/)
  })

  it('host-name checking off: one warning naming the setting', () => {
    const warnings = warningsFor({ 'ssl-endpoint-identification': 'none' })
    assert.equal(warnings.length, 1)
    assert.match(warnings[0] ?? '', /^TLS host-name checking is off \(--ssl-endpoint-identification none/)
  })

  it('both off: both warnings; the defaults: none', () => {
    assert.equal(warningsFor({ 'ssl-reject-unauthorized': 'false', 'ssl-endpoint-identification': 'none' }).length, 2)
    assert.deepEqual(warningsFor({}), [])
  })
})

describe('TLS and SASL options built from flags, the environment and a client file', () => {
  let dir: string
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'squeeze-sec-'))
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('PLAINTEXT by default: no ssl, no sasl', () => {
    const c = connectionFrom({ brokers: 'b:9092' }, {})
    assert.equal(c.ssl, undefined)
    assert.equal(c.sasl, undefined)
  })

  it('reads SASL_SSL + SCRAM from the environment; the password is usable but never serialised', () => {
    const c = connectionFrom(
      { brokers: 'b:9093' },
      {
        KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: 'u',
        KAFKA_SASL_PASSWORD: 's3cret-pw'
      }
    )
    assert.equal(c.ssl, true)
    assert.ok(c.sasl !== undefined && c.sasl.mechanism === 'scram-sha-512')
    assert.equal((c.sasl as { password: string }).password, 's3cret-pw')
    assert.equal((c.sasl as { username: string }).username, 'u')
    for (const text of [JSON.stringify(c), inspect(c, { depth: 10 }), JSON.stringify({ ...c.sasl })])
      assert.ok(!text.includes('s3cret-pw'), text)
  })

  it('a password file, CA file and reject-unauthorized flag build the TLS options', () => {
    const pw = join(dir, 'pw')
    writeFileSync(pw, 'file-pw\n')
    const ca = join(dir, 'ca.pem')
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')
    const s = securityFrom(
      {
        'security-protocol': 'SASL_SSL',
        'sasl-mechanism': 'PLAIN',
        'sasl-username': 'p',
        'sasl-password-file': pw,
        'ssl-ca-file': ca,
        'ssl-reject-unauthorized': 'false'
      },
      { KAFKA_SASL_PASSWORD: 'env-pw' }
    )
    assert.equal(
      (s.sasl as { password: string }).password,
      'file-pw',
      'the flag wins over the environment, trailing newline dropped'
    )
    assert.deepEqual(s.ssl, { rejectUnauthorized: false, ca: readFileSync(ca) })
  })

  it('reports every problem at once', () => {
    const message = configError(() =>
      securityFrom(
        {
          'security-protocol': 'SASL_SSL',
          'sasl-mechanism': 'SCRAM-SHA-1',
          'ssl-cert-file': join(dir, 'missing.pem'),
          'ssl-reject-unauthorized': 'maybe'
        },
        {}
      )
    )
    assert.match(
      message,
      /unknown SASL mechanism "SCRAM-SHA-1" \(--sasl-mechanism, KAFKA_SASL_MECHANISM, sasl\.mechanism\): use one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512/
    )
    assert.match(message, /needs a username/)
    assert.match(message, /needs a password: set KAFKA_SASL_PASSWORD or give --sasl-password-file/)
    assert.match(message, /--ssl-reject-unauthorized must be true or false/)
    assert.match(message, /both --ssl-cert-file and --ssl-key-file/)
    assert.match(message, /cannot read TLS certificate file/)
    const plain = configError(() => securityFrom({ 'sasl-mechanism': 'PLAIN', 'sasl-username': 'x' }, {}))
    assert.match(plain, /a SASL mechanism, a SASL username given but the security protocol is PLAINTEXT/)
    assert.match(
      configError(() => securityFrom({ 'security-protocol': 'TLS' }, {})),
      /unknown security protocol "TLS"/
    )
  })

  it('endpoint identification off (none, or empty as in Java) skips only the host-name check: the chain is still verified', () => {
    const ca = join(dir, 'ident-ca.pem')
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')
    assert.equal(securityFrom({ 'security-protocol': 'SSL' }, {}).ssl, true, 'default: Node checks chain and name')
    const file = join(dir, 'ident.properties')
    for (const [label, flags, fileText] of [
      ['flag none', { 'ssl-endpoint-identification': 'none' }, undefined],
      ['Java, empty value', {}, 'ssl.endpoint.identification.algorithm=\n'],
      ['librdkafka none', {}, 'ssl.endpoint.identification.algorithm=none\n']
    ] as const) {
      if (fileText !== undefined) writeFileSync(file, `security.protocol=SSL\nssl.ca.location=${ca}\n${fileText}`)
      const ssl = securityFrom(
        {
          'security-protocol': 'SSL',
          'ssl-ca-file': ca,
          ...flags,
          ...(fileText === undefined ? {} : { 'client-config': file })
        },
        {}
      ).ssl
      assert.ok(typeof ssl === 'object', label)
      assert.equal(ssl.rejectUnauthorized, true, `${label}: the certificate chain must still be verified`)
      assert.equal(typeof ssl.checkServerIdentity, 'function', label)
      assert.equal(ssl.checkServerIdentity?.('any.host', {} as never), undefined, label)
    }
    writeFileSync(file, 'security.protocol=SSL\nssl.endpoint.identification.algorithm=https\n')
    assert.equal(securityFrom({ 'client-config': file }, {}).ssl, true)
    assert.match(
      configError(() => securityFrom({ 'security-protocol': 'SSL', 'ssl-endpoint-identification': 'off' }, {})),
      /must be https or none, got "off"/
    )
  })

  it('an encrypted client key is decrypted with ssl.key.password, and the passphrase is not kept', () => {
    const { privateKey } = generateKeyPairSync('ec', {
      namedCurve: 'P-256',
      privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'key-Pass-41' },
      publicKeyEncoding: { type: 'spki', format: 'pem' }
    })
    const keyFile = join(dir, 'client-enc.key')
    writeFileSync(keyFile, privateKey)
    const certFile = join(dir, 'client-enc.pem')
    writeFileSync(certFile, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')
    const file = join(dir, 'enc.properties')
    writeFileSync(
      file,
      `security.protocol=SSL\nssl.certificate.location=${certFile}\nssl.key.location=${keyFile}\nssl.key.password=key-Pass-41\n`
    )
    const c = connectionFrom({ 'client-config': file, brokers: 'b:1' }, {})
    assert.ok(typeof c.ssl === 'object')
    const key = String(c.ssl.key)
    assert.match(key, /^-----BEGIN PRIVATE KEY-----/)
    assert.equal(createPrivateKey(key).asymmetricKeyType, 'ec')
    assert.ok(!inspect(c, { depth: 10 }).includes('key-Pass-41'))
    writeFileSync(
      file,
      `security.protocol=SSL\nssl.certificate.location=${certFile}\nssl.key.location=${keyFile}\nssl.key.password=wrong\n`
    )
    assert.match(
      configError(() => connectionFrom({ 'client-config': file, brokers: 'b:1' }, {})),
      /cannot decrypt TLS key file .* with ssl\.key\.password/
    )
  })
})

describe('broker addresses', () => {
  it('host:port and [IPv6]:port are taken; a missing port, a port out of range or a bare IPv6 address is refused', () => {
    const c = connectionFrom({ brokers: 'kafka-0.kafka:9092, [::1]:9093,10.0.0.1:65535,' }, {})
    assert.deepEqual(c.brokers, ['kafka-0.kafka:9092', '[::1]:9093', '10.0.0.1:65535'])
    for (const bad of ['kafka', 'kafka:', 'kafka:abc', 'kafka:0', 'kafka:99999', '::1:9092', '[::1]', 'a b:1'])
      assert.match(
        configError(() => connectionFrom({ brokers: `ok:1,${bad}` }, {})),
        new RegExp(
          `^invalid broker address ${bad.replace(/[[\]]/g, '\\$&')}: use host:port, or \\[IPv6 address\\]:port`
        )
      )
  })
})
