import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A throwaway CA, a server certificate signed by it, the PKCS12 keystore Kafka reads, and a client certificate
 * for mutual TLS. The server certificate names only IP 127.0.0.1, not `localhost`: a client that connects
 * to localhost meets a certificate whose name does not match (host-name check tests).
 */
export interface TestTls {
  readonly dir: string
  /** PEM CA certificate that signed the server certificate. */
  readonly caFile: string
  /** PEM CA certificate of a second, unrelated CA (for "wrong CA" tests). */
  readonly otherCaFile: string
  readonly serverCertFile: string
  readonly serverKeyFile: string
  /** PKCS12 keystore holding the server key and certificate chain. */
  readonly keystoreFile: string
  readonly keystorePassword: string
  /** PEM client certificate and key, signed by the CA (clientAuth). */
  readonly clientCertFile: string
  readonly clientKeyFile: string
  remove(): void
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
}

function makeCa(dir: string, name: string): { cert: string; key: string } {
  const key = join(dir, `${name}.key`)
  const cert = join(dir, `${name}.pem`)
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      `/CN=squeeze test ${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign'
    ],
    dir
  )
  return { cert, key }
}

/** A key and a certificate signed by `ca`, with the given subject and X.509 extensions. */
function issueCert(
  dir: string,
  ca: { cert: string; key: string },
  name: string,
  subject: string,
  extensions: string
): { cert: string; key: string } {
  const key = join(dir, `${name}.key`)
  const csr = join(dir, `${name}.csr`)
  const cert = join(dir, `${name}.pem`)
  const ext = join(dir, `${name}.ext`)
  writeFileSync(ext, extensions)
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', subject], dir)
  openssl(
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      ca.cert,
      '-CAkey',
      ca.key,
      '-CAcreateserial',
      '-out',
      cert,
      '-days',
      '2',
      '-extfile',
      ext
    ],
    dir
  )
  return { cert, key }
}

/** Creates everything with the openssl CLI in a fresh temp dir (about a second). */
export function createTestTls(): TestTls {
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-tls-'))
  const keystorePassword = 'squeeze-keystore-pw'
  const ca = makeCa(dir, 'ca')
  const other = makeCa(dir, 'other-ca')
  const server = issueCert(
    dir,
    ca,
    'server',
    '/CN=squeeze test broker',
    'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n'
  )
  const client = issueCert(
    dir,
    ca,
    'client',
    '/CN=squeeze-client',
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n'
  )
  const serverCertFile = server.cert
  const serverKeyFile = server.key
  const clientCertFile = client.cert
  const clientKeyFile = client.key
  const keystoreFile = join(dir, 'server.p12')
  openssl(
    [
      'pkcs12',
      '-export',
      '-in',
      serverCertFile,
      '-inkey',
      serverKeyFile,
      '-certfile',
      ca.cert,
      '-name',
      'broker',
      '-out',
      keystoreFile,
      '-passout',
      `pass:${keystorePassword}`
    ],
    dir
  )
  return {
    dir,
    caFile: ca.cert,
    otherCaFile: other.cert,
    serverCertFile,
    serverKeyFile,
    keystoreFile,
    keystorePassword,
    clientCertFile,
    clientKeyFile,
    remove: () => rmSync(dir, { recursive: true, force: true })
  }
}
