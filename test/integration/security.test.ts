import assert from 'node:assert/strict'
import { createTopicsAndWait } from '../../lib/kafka/topics.js'
import { execFile, spawn } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { get } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { connectionFrom } from '../../lib/config/cli.js'
import { saslOptions } from '../../lib/config/security.js'
import { connectionFailure, unclassifiedConnectionFailure } from '../../lib/kafka/connect-failure.js'
import { SqueezeError } from '../../lib/errors.js'
import { startKraftBroker, type EmbeddedBroker } from '../../lib/embedded-broker/kraft-broker.js'
import { createCluster, createKafkaClient } from '../../lib/kafka/connection.js'
import { createLogger } from '../../lib/log/logger.js'
import { startMetricsServer } from '../../lib/metrics/http-server.js'
import { createProducerMetrics } from '../../lib/metrics/producer-metrics.js'
import { createRegistry } from '../../lib/metrics/registry.js'
import { DEFAULT_PRODUCER_CONFIG, Producer } from '../../lib/producer/producer.js'
import { freePort } from '../helpers/ports.js'
import { createTestTls, type TestTls } from '../helpers/tls.js'

const CLI = fileURLToPath(new URL('../../services/cli/main.js', import.meta.url))

const USERS = {
  scram256: { name: 'alice', password: 'alice-Scram256-9f3c1e' },
  scram512: { name: 'bob', password: 'bob-Scram512-77ad02' },
  plain: { name: 'paula', password: 'paula-Plain-5be8d4' }
} as const
const SECRETS = [USERS.scram256.password, USERS.scram512.password, USERS.plain.password, 'wrong-Password-1d2c']

interface Run {
  code: number
  stdout: string
  stderr: string
}
/** Every byte any squeeze process printed during this file: scanned for passwords at the end. */
const captured: string[] = []

function squeeze(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    const childEnv: NodeJS.ProcessEnv = {
      ...process.env,
      KAFKA_BROKERS: '',
      KAFKA_SASL_PASSWORD: '',
      KAFKA_SASL_USERNAME: '',
      KAFKA_SASL_MECHANISM: '',
      KAFKA_SECURITY_PROTOCOL: '',
      ...env
    }
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: childEnv, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        captured.push(stdout, stderr)
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr })
      }
    )
  })
}

/** stderr lines that are not pino JSON: what a person reads. */
function humanLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{'))
}

describe('connect failures and the metrics listener (no broker)', () => {
  it('connect failures are told apart, each with its own code: credentials, TLS, unreachable', () => {
    const target = { brokers: ['h:1'], sasl: saslOptions('SCRAM-SHA-256', 'alice', 'pw-not-shown') }
    const sasl = Object.assign(new Error('SASL SCRAM SHA256 authentication failed: invalid credentials'), {
      name: 'KafkaJSSASLAuthenticationError'
    })
    const auth = connectionFailure(Object.assign(new Error('retries exceeded'), { originalError: sasl }), target)
    assert.equal(auth.code, 'SQUEEZE_ERR_AUTH_FAILED')
    assert.equal(auth.retriable, false)
    assert.match(
      auth.message,
      /^authentication failed for user alice \(SASL SCRAM-SHA-256\) at h:1: SASL SCRAM SHA256 authentication failed: invalid credentials; check sasl\.username\/password/
    )
    // The producer classifies without the target; the service describes the same failure again with it.
    const again = connectionFailure(connectionFailure(sasl), target)
    assert.equal(again.code, 'SQUEEZE_ERR_AUTH_FAILED')
    assert.equal(again.message, connectionFailure(sasl, target).message)
    const tlsError = Object.assign(new Error('Connection error: self-signed certificate in certificate chain'), {
      code: 'SELF_SIGNED_CERT_IN_CHAIN'
    })
    const tls = connectionFailure(tlsError, target)
    assert.equal(tls.code, 'SQUEEZE_ERR_TLS_HANDSHAKE')
    assert.match(tls.message, /^TLS handshake at h:1 failed: .*--ssl-ca-file/)
    const altname = Object.assign(
      new Error(
        "Hostname/IP does not match certificate's altnames: Host: localhost. is not in the cert's altnames: IP Address:127.0.0.1"
      ),
      { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }
    )
    assert.match(
      connectionFailure(altname, target).message,
      /does not name the host connected to: .*--ssl-endpoint-identification none/
    )
    const refused = connectionFailure(
      Object.assign(new Error('Connection error: connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      target
    )
    assert.equal(refused.code, 'SQUEEZE_ERR_BROKER_UNREACHABLE')
    assert.match(refused.message, /^cannot reach any Kafka broker at h:1: .*check --brokers/)
    assert.equal(refused.retriable, true)
    // What the frame guard destroyed a socket with reaches here as kafkajs's connection error, carrying its code.
    const notKafka = connectionFailure(
      Object.assign(new Error('retries exceeded'), {
        originalError: Object.assign(new Error('Connection error: h:1 answered in TLS: it is a TLS listener'), {
          name: 'KafkaJSConnectionError',
          code: 'SQUEEZE_ERR_NOT_KAFKA'
        })
      }),
      target
    )
    assert.equal(notKafka.code, 'SQUEEZE_ERR_NOT_KAFKA', 'not taken for a TLS handshake failure by its words')
    assert.equal(notKafka.message, 'h:1 answered in TLS: it is a TLS listener')
    assert.equal(notKafka.retriable, false)
    const closed = connectionFailure(
      Object.assign(new Error('Closed connection'), { name: 'KafkaJSConnectionClosedError' }),
      target
    )
    assert.equal(closed.code, 'SQUEEZE_ERR_BROKER_UNREACHABLE')
    assert.match(closed.message, /^the Kafka listener at h:1 closed the connection: .*--security-protocol/)
    assert.equal(closed.retriable, true, 'a broker going down closes connections too')
    // SASL to a listener without it: the broker answers the SaslHandshake with ILLEGAL_SASL_STATE.
    const noSasl = connectionFailure(
      Object.assign(new Error('Request is not valid given the current SASL state'), {
        name: 'KafkaJSProtocolError',
        type: 'ILLEGAL_SASL_STATE'
      }),
      target
    )
    assert.equal(noSasl.code, 'SQUEEZE_ERR_NOT_KAFKA')
    assert.match(
      noSasl.message,
      /^the listener at h:1 does not take SASL \(ILLEGAL_SASL_STATE\): .*drop the SASL settings/
    )
    // A listener that takes the connection and never answers: kafkajs's plain error at its next request, which no
    // connect step awaited, is classified where the command ends.
    const silent = unclassifiedConnectionFailure(new Error('Broker not connected'))
    assert.equal(silent?.code, 'SQUEEZE_ERR_BROKER_UNREACHABLE')
    assert.match(silent?.message ?? '', /^no Kafka broker answered: .*within the request timeout/)
    assert.match(
      connectionFailure(new Error('Broker not connected'), target).message,
      /^no Kafka broker answered at h:1:/
    )
    assert.equal(unclassifiedConnectionFailure(new Error('ENOENT: no such file')), undefined)
    assert.equal(unclassifiedConnectionFailure(new SqueezeError('SQUEEZE_ERR_SOURCE', 'x')), undefined)
    const other = new SqueezeError('SQUEEZE_ERR_SOURCE', 'topic t not found')
    assert.equal(connectionFailure(other, target), other, 'an error that is not about connecting is passed through')
  })

  it('the metrics listener binds the address it is given', async () => {
    const server = await startMetricsServer(createRegistry(), { port: 0, host: '127.0.0.2' })
    try {
      assert.equal(await httpStatus('127.0.0.2', server.port), 200)
      await assert.rejects(httpStatus('127.0.0.1', server.port), /ECONNREFUSED/)
    } finally {
      await server.close()
    }
  })
})

function httpStatus(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    get({ host, port, path: '/healthz' }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    }).on('error', reject)
  })
}

describe('TLS and SASL against a broker (SASL_SSL, and SSL requiring client certificates)', () => {
  let tls: TestTls
  let broker: EmbeddedBroker
  let dir: string
  before(async () => {
    tls = createTestTls()
    dir = mkdtempSync(join(tmpdir(), 'squeeze-sec-run-'))
    broker = await startKraftBroker({
      security: {
        keystore: { path: tls.keystoreFile, password: tls.keystorePassword },
        saslSsl: {
          plainUsers: { [USERS.plain.name]: USERS.plain.password },
          scramUsers: [
            { mechanism: 'SCRAM-SHA-256', name: USERS.scram256.name, password: USERS.scram256.password },
            { mechanism: 'SCRAM-SHA-512', name: USERS.scram512.name, password: USERS.scram512.password }
          ]
        },
        ssl: { clientCaFile: tls.caFile }
      }
    })
  })
  after(async () => {
    await broker?.stop()
    tls?.remove()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  async function roundTrip(
    label: string,
    auth: { args: string[]; env: NodeJS.ProcessEnv },
    bootstrap: string
  ): Promise<void> {
    const topic = `sec-${label}-${Date.now().toString(36)}`
    const common = ['--brokers', bootstrap, '--ssl-ca-file', tls.caFile, '--log-level', 'debug', ...auth.args]
    const produced = await squeeze(
      [
        'produce',
        ...common,
        '--topic',
        topic,
        '--create-partitions',
        '2',
        '--records',
        '200',
        '--kind',
        'http',
        '--codec',
        'zstd:3',
        '-X',
        'linger.ms=5'
      ],
      auth.env
    )
    assert.equal(produced.code, 0, `${label} produce:\n${produced.stderr}`)
    assert.match(produced.stdout, /^produced 200 records to /)
    assert.match(produced.stdout, /undelivered: 0/)
    // The copier over the same secured connection, with transactions (exactly-once) for good measure.
    const copied = await squeeze(
      [
        'copy',
        ...common,
        '--topic',
        topic,
        '--targets',
        'zstd:1',
        '--until-end',
        '--exactly-once',
        '--transactional-id',
        `sec-${label}`
      ],
      auth.env
    )
    assert.equal(copied.code, 0, `${label} copy:\n${copied.stderr}`)
    assert.match(copied.stdout, /^copied 200 records from /)
    const json = join(dir, `${topic}.json`)
    const consumed = await squeeze(
      ['consume', ...common, '--topic', `${topic},${topic}.zstd-1`, '--format', 'http', '--json', json],
      auth.env
    )
    assert.equal(consumed.code, 0, `${label} consume:\n${consumed.stderr}`)
    const measured = JSON.parse(readFileSync(json, 'utf8')) as Array<{
      topic: string
      records: number
      corruptRecords: number
      corruptBatches: number
    }>
    for (const name of [topic, `${topic}.zstd-1`]) {
      const m = measured.find((x) => x.topic === name)
      assert.equal(
        m?.records,
        200,
        `${name}: ${JSON.stringify(measured)}\n${consumed.stderr
          .split('\n')
          .filter((l) => l.includes('"level":4') || l.includes('"level":5'))
          .slice(0, 5)
          .join('\n')}`
      )
      assert.equal(m?.corruptRecords, 0)
      assert.equal(m?.corruptBatches, 0)
    }
  }

  it('SASL_SSL + SCRAM-SHA-256 (credentials in the environment): 200 records produced, copied and consumed', async () => {
    await roundTrip(
      'scram256',
      {
        args: ['--security-protocol', 'SASL_SSL', '--sasl-mechanism', 'SCRAM-SHA-256'],
        env: { KAFKA_SASL_USERNAME: USERS.scram256.name, KAFKA_SASL_PASSWORD: USERS.scram256.password }
      },
      broker.saslSslBootstrap as string
    )
  })

  it('SASL_SSL + SCRAM-SHA-512 (environment names the mechanism, password from a file)', async () => {
    const pw = join(dir, 'scram512.pw')
    writeFileSync(pw, `${USERS.scram512.password}\n`, { mode: 0o600 })
    await roundTrip(
      'scram512',
      {
        args: ['--sasl-username', USERS.scram512.name, '--sasl-password-file', pw],
        env: { KAFKA_SECURITY_PROTOCOL: 'SASL_SSL', KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512' }
      },
      broker.saslSslBootstrap as string
    )
  })

  it('SASL_SSL + PLAIN (a Java client properties file with sasl.jaas.config)', async () => {
    const file = join(dir, 'plain.properties')
    writeFileSync(
      file,
      `security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="${USERS.plain.name}" password="${USERS.plain.password}";\n`,
      { mode: 0o600 }
    )
    await roundTrip('plain', { args: ['--client-config', file], env: {} }, broker.saslSslBootstrap as string)
  })

  it('mutual TLS (--ssl-cert-file, --ssl-key-file) against a listener that requires client certificates: 200 records produced, copied and consumed', async () => {
    await roundTrip(
      'mtls',
      {
        args: [
          '--security-protocol',
          'SSL',
          '--ssl-cert-file',
          tls.clientCertFile,
          '--ssl-key-file',
          tls.clientKeyFile
        ],
        env: {}
      },
      broker.sslBootstrap as string
    )
  })

  it('mutual TLS: without a client certificate the broker refuses the connection (exit 4, TLS handshake failed)', async () => {
    const result = await squeeze([
      'consume',
      '--brokers',
      broker.sslBootstrap as string,
      '--topic',
      'any-topic',
      '--security-protocol',
      'SSL',
      '--ssl-ca-file',
      tls.caFile,
      '--log-level',
      'debug'
    ])
    assert.equal(result.code, 4, result.stderr)
    const lines = humanLines(result.stderr)
    assert.equal(lines.length, 1, result.stderr)
    assert.match(lines[0] as string, /^squeeze: TLS handshake at .* failed: .*\[SQUEEZE_ERR_TLS_HANDSHAKE\]$/)
    console.log(`# no client certificate: ${lines[0]}`)
  })

  for (const [command, mechanism, user] of [
    ['produce', 'SCRAM-SHA-256', USERS.scram256.name],
    ['consume', 'SCRAM-SHA-512', USERS.scram512.name],
    ['produce', 'PLAIN', USERS.plain.name]
  ] as const) {
    it(`${command} with a wrong ${mechanism} password: exit 3 at once and one clear line about authentication`, async () => {
      const result = await squeeze(
        [
          command,
          '--brokers',
          broker.saslSslBootstrap as string,
          '--topic',
          'any-topic',
          '--ssl-ca-file',
          tls.caFile,
          '--security-protocol',
          'SASL_SSL',
          '--sasl-mechanism',
          mechanism,
          '--log-level',
          'debug'
        ],
        { KAFKA_SASL_USERNAME: user, KAFKA_SASL_PASSWORD: 'wrong-Password-1d2c' }
      )
      assert.equal(result.code, 3, result.stderr)
      const lines = humanLines(result.stderr)
      assert.equal(lines.length, 1, `one line for a person to read:\n${result.stderr}`)
      assert.match(
        lines[0] as string,
        new RegExp(
          `^squeeze: authentication failed for user ${user} \\(SASL ${mechanism}\\) at .*check sasl\\.username/password.*\\[SQUEEZE_ERR_AUTH_FAILED\\]$`
        )
      )
      assert.match(lines[0] as string, new RegExp(mechanism.replace(/-/g, '.?'), 'i'))
      console.log(`# ${command} ${mechanism}: ${lines[0]}`)
    })
  }

  it('SSL with the wrong CA: exit 4 and one clear line about the certificate', async () => {
    const result = await squeeze([
      'consume',
      '--brokers',
      broker.sslBootstrap as string,
      '--topic',
      'any-topic',
      '--security-protocol',
      'SSL',
      '--ssl-ca-file',
      tls.otherCaFile,
      '--ssl-cert-file',
      tls.clientCertFile,
      '--ssl-key-file',
      tls.clientKeyFile,
      '--log-level',
      'debug'
    ])
    assert.equal(result.code, 4, result.stderr)
    const lines = humanLines(result.stderr)
    assert.equal(lines.length, 1, result.stderr)
    assert.match(lines[0] as string, /^squeeze: .*(self[- ]signed certificate|unable to (get|verify)).*certificate/i)
    console.log(`# wrong CA: ${lines[0]}`)
  })

  it("a client whose security protocol is not the listener's is told which to give, in one line", async () => {
    const cases = [
      // Plaintext to the SSL and SASL_SSL listeners: Kafka answers with a TLS alert.
      [broker.sslBootstrap, [], /^squeeze: .* answered in TLS: it is a TLS listener, .*add --security-protocol SSL/],
      [broker.saslSslBootstrap, [], /^squeeze: .* answered in TLS: it is a TLS listener, .*\[SQUEEZE_ERR_NOT_KAFKA\]$/],
      // TLS without SASL to the SASL_SSL listener: it closes the connection.
      [
        broker.saslSslBootstrap,
        ['--security-protocol', 'SSL', '--ssl-ca-file', tls.caFile],
        /^squeeze: the Kafka listener at .* closed the connection: .*check --security-protocol .*--sasl-mechanism/
      ],
      // TLS to the plaintext listener: it closes the connection in the handshake.
      [
        broker.bootstrap,
        ['--security-protocol', 'SSL', '--ssl-ca-file', tls.caFile],
        /^squeeze: TLS handshake at .* failed: .*it may not be a TLS listener \(PLAINTEXT or SASL_PLAINTEXT/
      ]
    ] as const
    for (const [at, args, expected] of cases) {
      const result = await squeeze(['consume', '--brokers', at as string, '--topic', 'any-topic', ...args])
      const lines = humanLines(result.stderr)
      assert.equal(lines.length, 1, result.stderr)
      assert.match(lines[0] as string, expected)
      console.log(`# ${at} ${args.join(' ')}: exit ${result.code}: ${lines[0]}`)
    }
  })

  it('SASL_SSL with the wrong CA fails in TLS, before any credential is sent', async () => {
    const result = await squeeze(
      [
        'produce',
        '--brokers',
        broker.saslSslBootstrap as string,
        '--topic',
        'any-topic',
        '--records',
        '10',
        '--ssl-ca-file',
        tls.otherCaFile,
        '--security-protocol',
        'SASL_SSL',
        '--sasl-mechanism',
        'SCRAM-SHA-256',
        '--log-level',
        'debug'
      ],
      { KAFKA_SASL_USERNAME: USERS.scram256.name, KAFKA_SASL_PASSWORD: USERS.scram256.password }
    )
    assert.equal(result.code, 4, result.stderr)
    const lines = humanLines(result.stderr)
    assert.equal(lines.length, 1, result.stderr)
    assert.match(lines[0] as string, /certificate.*\[SQUEEZE_ERR_TLS_HANDSHAKE\]$/i)
    assert.doesNotMatch(lines[0] as string, /authentication/i)
  })

  it('endpoint identification off still refuses a broker certificate from the wrong CA (exit 4)', async () => {
    const result = await squeeze([
      'consume',
      '--brokers',
      broker.sslBootstrap as string,
      '--topic',
      'any-topic',
      '--security-protocol',
      'SSL',
      '--ssl-ca-file',
      tls.otherCaFile,
      '--ssl-cert-file',
      tls.clientCertFile,
      '--ssl-key-file',
      tls.clientKeyFile,
      '--ssl-endpoint-identification',
      'none',
      '--log-level',
      'debug'
    ])
    assert.equal(result.code, 4, result.stderr)
    const lines = humanLines(result.stderr)
    assert.equal(lines.length, 1, result.stderr)
    assert.match(
      lines[0] as string,
      /^squeeze: TLS handshake .*(self[- ]signed certificate|unable to (get|verify)).*\[SQUEEZE_ERR_TLS_HANDSHAKE\]$/i
    )
  })

  it('a certificate that does not name the host (localhost) is refused, and accepted only with endpoint identification off', async () => {
    const viaLocalhost = (broker.sslBootstrap as string).replace('127.0.0.1', 'localhost')
    const topic = `sec-hostname-${Date.now().toString(36)}`
    const mtls = [
      '--security-protocol',
      'SSL',
      '--ssl-ca-file',
      tls.caFile,
      '--ssl-cert-file',
      tls.clientCertFile,
      '--ssl-key-file',
      tls.clientKeyFile
    ]
    const refused = await squeeze([
      'produce',
      '--brokers',
      viaLocalhost,
      ...mtls,
      '--topic',
      topic,
      '--create-partitions',
      '1',
      '--records',
      '20',
      '--log-level',
      'debug'
    ])
    assert.equal(refused.code, 4, refused.stderr)
    const lines = humanLines(refused.stderr)
    assert.equal(lines.length, 1, refused.stderr)
    assert.match(
      lines[0] as string,
      /^squeeze: TLS handshake .*altnames.*does not name the host connected to.*--ssl-endpoint-identification none/
    )
    console.log(`# host name mismatch: ${lines[0]}`)

    const produced = await squeeze([
      'produce',
      '--brokers',
      viaLocalhost,
      ...mtls,
      '--ssl-endpoint-identification',
      'none',
      '--topic',
      topic,
      '--create-partitions',
      '1',
      '--records',
      '20',
      '--log-level',
      'debug'
    ])
    assert.equal(produced.code, 0, produced.stderr)
    assert.match(produced.stdout, /^produced 20 records to [^]*undelivered: 0/)
    // The same as a stock librdkafka file: its spellings, "none", and keys squeeze has no use for.
    const file = join(dir, 'librdkafka-ssl.properties')
    writeFileSync(
      file,
      [
        `metadata.broker.list=${viaLocalhost}`,
        'security.protocol=ssl',
        `ssl.ca.location=${tls.caFile}`,
        `ssl.certificate.location=${tls.clientCertFile}`,
        `ssl.key.location=${tls.clientKeyFile}`,
        'ssl.endpoint.identification.algorithm=none',
        'enable.auto.commit=false',
        'fetch.wait.max.ms=50',
        ''
      ].join('\n')
    )
    const json = join(dir, `${topic}.json`)
    const consumed = await squeeze([
      'consume',
      '--client-config',
      file,
      '--topic',
      topic,
      '--format',
      'none',
      '--json',
      json
    ])
    assert.equal(consumed.code, 0, consumed.stderr)
    assert.equal((JSON.parse(readFileSync(json, 'utf8')) as Array<{ records: number }>)[0]?.records, 20)
    const ignoredLines = consumed.stderr
      .split('\n')
      .filter((l) => l.includes('settings squeeze does not use were ignored'))
    assert.equal(ignoredLines.length, 1, consumed.stderr)
    assert.match(ignoredLines[0] as string, /"ignored":\["enable\.auto\.commit","fetch\.wait\.max\.ms"\]/)
  })

  it(
    '--wait-for-brokers-s with a wrong password: keeps retrying, and readyz and the log say "authentication failed", not "not ready"',
    { timeout: 120_000 },
    async (t) => {
      const metricsPort = await freePort()
      const child = spawn(
        process.execPath,
        [
          CLI,
          'consume',
          '--brokers',
          broker.saslSslBootstrap as string,
          '--topic',
          'any-topic',
          '--ssl-ca-file',
          tls.caFile,
          '--security-protocol',
          'SASL_SSL',
          '--sasl-mechanism',
          'SCRAM-SHA-512',
          '--wait-for-brokers-s',
          '600',
          '--metrics-port',
          String(metricsPort),
          '--log-level',
          'debug'
        ],
        {
          env: {
            ...process.env,
            KAFKA_BROKERS: '',
            KAFKA_SASL_USERNAME: USERS.scram512.name,
            KAFKA_SASL_PASSWORD: 'wrong-Password-1d2c'
          }
        }
      )
      t.after(() => child.kill('SIGKILL'))
      let stderr = ''
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
      child.stdout.on('data', (d: Buffer) => captured.push(d.toString()))
      const retries = (): number =>
        stderr.split('\n').filter((l) => l.includes('authentication failed; waiting (--wait-for-brokers-s)')).length
      let body = ''
      const deadline = Date.now() + 60_000
      while ((retries() < 2 || body === '') && Date.now() < deadline && child.exitCode === null) {
        await new Promise((resolve) => setTimeout(resolve, 200))
        const res = await fetch(`http://127.0.0.1:${metricsPort}/readyz`).catch(() => undefined)
        if (res?.status === 503) body = await res.text()
      }
      captured.push(stderr)
      assert.equal(child.exitCode, null, `still waiting, not exited:\n${stderr}`)
      assert.ok(retries() >= 2, `retried with an authentication log line:\n${stderr}`)
      assert.equal(body, 'authentication failed (SQUEEZE_ERR_AUTH_FAILED)\n')
      assert.doesNotMatch(stderr, /not ready/)
      const warn = stderr.split('\n').find((l) => l.includes('authentication failed; waiting')) as string
      assert.match(warn, /"code":"SQUEEZE_ERR_AUTH_FAILED"/)
      assert.match(warn, /authentication failed for user bob \(SASL SCRAM-SHA-512\)/)
    }
  )

  it('in process: debug logs (even of the whole connection config) and /metrics never carry the password', async () => {
    const logFile = join(dir, 'in-process.log')
    const fd = openSync(logFile, 'w')
    const log = createLogger({ level: 'debug', fd })
    const registry = createRegistry()
    const connection = connectionFrom(
      { brokers: broker.saslSslBootstrap as string, 'ssl-ca-file': tls.caFile },
      {
        KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
        KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
        KAFKA_SASL_USERNAME: USERS.scram512.name,
        KAFKA_SASL_PASSWORD: USERS.scram512.password
      }
    )
    log.debug({ connection }, 'a careless caller logs the whole connection config')
    log.debug({ sasl: connection.sasl, password: USERS.scram512.password }, 'and one logs a password field by name')
    const admin = createKafkaClient(connection, log).admin()
    await admin.connect()
    const topic = `sec-inproc-${Date.now().toString(36)}`
    await createTopicsAndWait(admin, [{ topic, numPartitions: 1 }])
    await admin.disconnect()
    const producer = new Producer(
      { ...DEFAULT_PRODUCER_CONFIG, lingerMs: 5 },
      { cluster: createCluster(connection, log), log, metrics: createProducerMetrics(registry) }
    )
    await producer.start()
    for (let i = 0; i < 50; i++) await producer.send({ topic, key: null, value: Buffer.from(`line ${i}`) })
    await producer.close()
    assert.equal(producer.snapshot().recordsAcked, 50)
    const metricsText = await registry.metrics()
    closeSync(fd)
    const logText = readFileSync(logFile, 'utf8')
    assert.match(logText, /a careless caller logs the whole connection config/)
    assert.match(logText, /"username":"bob"/, 'the log line is there, with the non-secret fields')
    assert.match(metricsText, /squeeze_records_produced_total\{[^}]*\} 50/)
    captured.push(logText, metricsText)
  })

  it('no password appears in any output captured above (stdout, stderr at --log-level debug, logs, metrics)', () => {
    assert.ok(captured.length >= 20, `captured ${captured.length} outputs`)
    const all = captured.join('\n')
    assert.ok(all.length > 10_000, 'debug logs were captured')
    for (const secret of SECRETS)
      assert.ok(!all.includes(secret), `a password leaked into the output: ${secret.slice(0, 4)}…`)
  })
})
