import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { connectionFrom } from '../../../lib/config/cli.js'
import { parseJaasConfig, parseJavaProperties } from '../../../lib/config/client-properties.js'
import { configError } from '../../helpers/config-error.js'

describe('client properties files (Java and librdkafka) and JAAS lines', () => {
  let dir: string
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'squeeze-props-'))
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('reads a Java client properties file with a JAAS line, and never quotes the password in errors', () => {
    const file = join(dir, 'client.properties')
    writeFileSync(
      file,
      [
        '# squeeze client',
        'bootstrap.servers=k1:9093,k2:9093',
        'security.protocol = SASL_SSL',
        'sasl.mechanism: SCRAM-SHA-256',
        'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\',
        '    username="svc" password="p\\\\\\"w;x";',
        ''
      ].join('\n')
    )
    const c = connectionFrom({ 'client-config': file }, {})
    assert.deepEqual(c.brokers, ['k1:9093', 'k2:9093'])
    assert.equal(c.ssl, true)
    assert.equal(c.sasl?.mechanism, 'scram-sha-256')
    assert.equal((c.sasl as { username: string }).username, 'svc')
    assert.equal((c.sasl as { password: string }).password, 'p"w;x')

    writeFileSync(
      file,
      'security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nssl.truststore.location=/x.jks\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="a" password="leak-me-not";\n'
    )
    const message = configError(() => connectionFrom({ 'client-config': file, brokers: 'b:1' }, {}))
    assert.match(message, /ssl\.truststore\.location is a JKS truststore, which squeeze does not read; .*--ssl-ca-file/)
    assert.match(
      message,
      /uses org\.apache\.kafka\.common\.security\.scram\.ScramLoginModule, but PLAIN needs org\.apache\.kafka\.common\.security\.plain\.PlainLoginModule/
    )
    assert.ok(!message.includes('leak-me-not'))
    writeFileSync(file, 'sasl.jaas.config=PlainLoginModule username="a" password="leak-me-not"\n')
    assert.ok(!configError(() => connectionFrom({ 'client-config': file, brokers: 'b:1' }, {})).includes('leak-me-not'))
  })

  it('parses JAAS lines and Java properties escapes', () => {
    assert.deepEqual(
      parseJaasConfig('org.apache.kafka.common.security.plain.PlainLoginModule required username=u password="a b";'),
      { module: 'org.apache.kafka.common.security.plain.PlainLoginModule', username: 'u', password: 'a b' }
    )
    assert.throws(() => parseJaasConfig('required username="u";'))
    const props = parseJavaProperties('a=1\n! comment\nb : two words\nc\\:d=\\u0041\ne   3\n')
    assert.deepEqual(
      [...props],
      [
        ['a', '1'],
        ['b', 'two words'],
        ['c:d', 'A'],
        ['e', '3']
      ]
    )
  })

  it('a librdkafka client file: its spellings are used, every other key is logged once as ignored (names only)', () => {
    const ca = join(dir, 'rd-ca.pem')
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')
    const file = join(dir, 'librdkafka.properties')
    writeFileSync(
      file,
      [
        'metadata.broker.list=k1:9093,k2:9093',
        'client.id=edge-shipper',
        'security.protocol=sasl_ssl',
        'sasl.mechanisms=SCRAM-SHA-512',
        'sasl.username=shipper',
        'sasl.password=rd-Secret-77',
        `ssl.ca.location=${ca}`,
        'enable.ssl.certificate.verification=true',
        'debug=broker,protocol',
        'queue.buffering.max.ms=5',
        'sasl.oauthbearer.client.secret=not-used-3e1',
        ''
      ].join('\n')
    )
    const warnings: Array<{ obj: unknown; msg: string }> = []
    const c = connectionFrom({ 'client-config': file }, {}, {
      warn: (obj: unknown, msg?: string) => warnings.push({ obj, msg: msg ?? '' })
    } as never)
    assert.deepEqual(c.brokers, ['k1:9093', 'k2:9093'])
    assert.equal(c.clientId, 'edge-shipper')
    assert.equal(c.sasl?.mechanism, 'scram-sha-512')
    assert.equal((c.sasl as { username: string }).username, 'shipper')
    assert.equal((c.sasl as { password: string }).password, 'rd-Secret-77')
    assert.deepEqual(c.ssl, { rejectUnauthorized: true, ca: readFileSync(ca) })
    assert.equal(warnings.length, 1, 'one log line')
    assert.deepEqual(warnings[0]?.obj, {
      clientConfig: file,
      ignored: ['debug', 'queue.buffering.max.ms', 'sasl.oauthbearer.client.secret']
    })
    assert.match(warnings[0]?.msg ?? '', /ignored/)
    assert.ok(!JSON.stringify(warnings).includes('not-used-3e1') && !JSON.stringify(warnings).includes('rd-Secret-77'))

    writeFileSync(
      file,
      'security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.mechanisms=SCRAM-SHA-256\nsasl.username=u\nsasl.password=p\n'
    )
    assert.match(
      configError(() => connectionFrom({ 'client-config': file, brokers: 'b:1' }, {})),
      /two spellings of one setting disagree \(sasl\.mechanism, sasl\.mechanisms\)/
    )
    writeFileSync(
      file,
      'bootstrap.servers=b:1\nenable.ssl.certificate.verification=true\nssl.endpoint.identification.algorithm=https\n'
    )
    assert.equal(
      connectionFrom({ 'client-config': file }, {}).ssl,
      undefined,
      "a PLAINTEXT file's TLS defaults are harmless, not an error"
    )
  })

  it('Java key stores: JKS or PKCS12 gets an error naming the PEM option; a PEM truststore is read as the CA file', () => {
    const file = join(dir, 'stores.properties')
    writeFileSync(
      file,
      'security.protocol=SSL\nssl.truststore.location=/etc/kafka/truststore.p12\nssl.truststore.type=PKCS12\nssl.truststore.password=changeit\n' +
        'ssl.keystore.location=/etc/kafka/client.keystore.jks\nssl.keystore.password=changeit\nssl.key.password=changeit\n'
    )
    const message = configError(() => connectionFrom({ 'client-config': file, brokers: 'b:1' }, {}))
    assert.match(
      message,
      /ssl\.truststore\.location is a PKCS12 truststore, which squeeze does not read; give its CA certificates as a PEM file with --ssl-ca-file \(or ssl\.ca\.location\)/
    )
    assert.match(
      message,
      /ssl\.keystore\.location is a JKS keystore, which squeeze does not read; give the client certificate and key as PEM files with --ssl-cert-file and --ssl-key-file/
    )
    assert.ok(!message.includes('changeit'))
    const ca = join(dir, 'trust.pem')
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n')
    writeFileSync(file, `security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=${ca}\n`)
    assert.deepEqual(connectionFrom({ 'client-config': file, brokers: 'b:1' }, {}).ssl, {
      rejectUnauthorized: true,
      ca: readFileSync(ca)
    })
  })
})
