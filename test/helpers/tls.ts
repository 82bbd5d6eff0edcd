import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A throwaway CA, a server certificate for 127.0.0.1/localhost signed by it, and the PKCS12 keystore Kafka reads. */
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
  remove(): void
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
}

function makeCa(dir: string, name: string): { cert: string; key: string } {
  const key = join(dir, `${name}.key`)
  const cert = join(dir, `${name}.pem`)
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=squeeze test ${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir)
  return { cert, key }
}

/** Creates everything with the openssl CLI in a fresh temp dir (about a second). */
export function createTestTls(): TestTls {
  const dir = mkdtempSync(join(tmpdir(), 'squeeze-tls-'))
  const keystorePassword = 'squeeze-keystore-pw'
  const ca = makeCa(dir, 'ca')
  const other = makeCa(dir, 'other-ca')
  const serverKeyFile = join(dir, 'server.key')
  const csr = join(dir, 'server.csr')
  const serverCertFile = join(dir, 'server.pem')
  const ext = join(dir, 'server.ext')
  writeFileSync(ext, 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n')
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', serverKeyFile, '-out', csr, '-subj', '/CN=localhost'], dir)
  openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-out', serverCertFile, '-days', '2', '-extfile', ext], dir)
  const keystoreFile = join(dir, 'server.p12')
  openssl(['pkcs12', '-export', '-in', serverCertFile, '-inkey', serverKeyFile, '-certfile', ca.cert, '-name', 'broker', '-out', keystoreFile, '-passout', `pass:${keystorePassword}`], dir)
  return {
    dir,
    caFile: ca.cert,
    otherCaFile: other.cert,
    serverCertFile,
    serverKeyFile,
    keystoreFile,
    keystorePassword,
    remove: () => rmSync(dir, { recursive: true, force: true })
  }
}
